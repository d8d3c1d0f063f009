package plugins

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probe is a plugin whose start is scripted, to test the registry alone.
type probe struct {
	name    string
	delay   time.Duration
	barrier *sync.WaitGroup // if set, Start waits until every plugin sharing it has begun
	gate    chan struct{}   // if set, Start waits until it is closed
	err     error
	started atomic.Bool
	stopped atomic.Bool
}

func (p *probe) Name() string { return p.name }
func (p *probe) Start(ctx context.Context, env Env) error {
	if p.barrier != nil {
		p.barrier.Done()
		met := make(chan struct{})
		go func() { p.barrier.Wait(); close(met) }()
		select {
		case <-met:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if p.gate != nil {
		select {
		case <-p.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	select {
	case <-time.After(p.delay):
	case <-ctx.Done():
		return ctx.Err()
	}
	p.started.Store(p.err == nil)
	return p.err
}
func (p *probe) Stop(context.Context) error { p.stopped.Store(true); return nil }
func (p *probe) Status() Status {
	st := StateStarting
	if p.started.Load() {
		st = StateReady
	}
	return Status{Name: p.name, State: st}
}

func TestRegistry_StartsConcurrentlyAndReports(t *testing.T) {
	var r Registry
	var barrier sync.WaitGroup
	barrier.Add(2)
	a := &probe{name: "a", barrier: &barrier}
	b := &probe{name: "b", barrier: &barrier}
	r.Register("a", func() Plugin { return a })
	r.Register("b", func() Plugin { return b })
	assert.Equal(t, []string{"a", "b"}, r.Names())

	// Each start waits for the other: only a concurrent start finishes.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	set, err := r.Start(ctx, []string{"b", "a", "b"}, Env{})
	require.NoError(t, err, "plugins must start concurrently")
	assert.Equal(t, []string{"b", "a"}, set.Names(), "start order, duplicates once")
	assert.Equal(t, []Status{{Name: "b", State: StateReady}, {Name: "a", State: StateReady}}, set.Statuses())
	p, ok := set.Get("a")
	require.True(t, ok)
	assert.Same(t, a, p)
	require.NoError(t, set.Stop(context.Background()))
	assert.True(t, a.stopped.Load() && b.stopped.Load())
}

func TestSet_ReportsPluginsStartingBeforeTheyAreReady(t *testing.T) {
	var r Registry
	gate := make(chan struct{})
	r.Register("a", func() Plugin { return &probe{name: "a", gate: gate} })
	set, err := r.New([]string{"a"})
	require.NoError(t, err)
	starting := []Status{{Name: "a", State: StateStarting}}
	assert.Equal(t, starting, set.Statuses(), "made, not started")

	started := make(chan error, 1)
	go func() { started <- set.Start(context.Background(), Env{}) }()
	assert.Equal(t, starting, set.Statuses(), "while Start runs")
	close(gate)
	require.NoError(t, <-started)
	assert.Equal(t, []Status{{Name: "a", State: StateReady}}, set.Statuses())
	require.NoError(t, set.Stop(context.Background()))
}

func TestRegistry_UnknownNameStartsNothing(t *testing.T) {
	var r Registry
	a := &probe{name: "a"}
	r.Register("a", func() Plugin { return a })
	set, err := r.New([]string{"a", "teleporter"})
	assert.Nil(t, set)
	var nf *NotFoundError
	require.ErrorAs(t, err, &nf)
	_, err = r.Start(context.Background(), []string{"a", "teleporter"}, Env{})
	require.ErrorAs(t, err, &nf)
	assert.Equal(t, "Plugin teleporter not found", err.Error())
	assert.False(t, a.started.Load())
}

func TestRegistry_FailureStopsTheOthers(t *testing.T) {
	var r Registry
	good := &probe{name: "good"}
	r.Register("good", func() Plugin { return good })
	r.Register("bad", func() Plugin { return &probe{name: "bad", err: errors.New("no binary")} })
	_, err := r.Start(context.Background(), []string{"good", "bad"}, Env{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "plugin bad: no binary")
	assert.True(t, good.stopped.Load())
}

func TestRegistry_DeadlineEndsStart(t *testing.T) {
	var r Registry
	r.Register("slow", func() Plugin { return &probe{name: "slow", delay: time.Hour} })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := r.Start(ctx, []string{"slow"}, Env{})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestSet_NilHasNoPlugins(t *testing.T) {
	var s *Set
	_, ok := s.Get("jupyter")
	assert.False(t, ok)
	assert.Equal(t, []Status{}, s.Statuses())
	assert.NoError(t, s.Stop(context.Background()))
}
