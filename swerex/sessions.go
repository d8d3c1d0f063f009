package swerex

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/actionserver/actionserver/executor"
	"github.com/actionserver/actionserver/internal/pyfmt"
)

// sessions maps SWE-ReX session names to the executor's named sessions.
// Names are the client's (SWE-agent's first is "default", which the
// executor keeps for OpenHands' run), so each gets an executor id of its
// own.
type sessions struct {
	exec *executor.Executor

	mu     sync.Mutex
	byName map[string]*session // nil value: the name is reserved while it starts
}

// session is one SWE-ReX bash session: one executor session, the output
// its requests have consumed, and a lock that lets one request in at a
// time, as upstream's single pexpect child does. Other sessions never
// wait on it.
type session struct {
	name string
	es   *executor.Session
	sem  chan struct{}
	cur  *cursor // the last command started; nil before the first
}

func newSessions(e *executor.Executor) *sessions {
	return &sessions{exec: e, byName: map[string]*session{}}
}

// lock waits for the session to be free, or for ctx.
func (s *session) lock(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *session) unlock() { <-s.sem }

// get returns a session by name, or SessionDoesNotExistError.
func (ss *sessions) get(name string) (*session, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.byName[name]
	if s == nil {
		return nil, newException(classNoSession, "session %s does not exist", pyfmt.String(name))
	}
	return s, nil
}

// create starts a session and sources the startup files in it.
func (ss *sessions) create(ctx context.Context, req createSessionRequest) (createSessionResponse, error) {
	ss.mu.Lock()
	if _, taken := ss.byName[req.Session]; taken {
		ss.mu.Unlock()
		return createSessionResponse{}, newException(classSessionExists, "session %s already exists", req.Session)
	}
	ss.byName[req.Session] = nil
	ss.mu.Unlock()

	s, out, err := ss.start(ctx, req)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if err != nil {
		delete(ss.byName, req.Session)
		return createSessionResponse{}, err
	}
	ss.byName[req.Session] = s
	return createSessionResponse{Output: out, SessionType: "bash"}, nil
}

func (ss *sessions) start(ctx context.Context, req createSessionRequest) (*session, string, error) {
	es, err := ss.exec.CreateSession(ctx, executor.SessionOptions{})
	if err != nil {
		return nil, "", err
	}
	s := &session{name: req.Session, es: es, sem: make(chan struct{}, 1)}
	if len(req.StartupSource) == 0 {
		return s, "", nil
	}
	parts := make([]string, len(req.StartupSource))
	for i, f := range req.StartupSource {
		parts[i] = "source " + f
	}
	c, err := es.Start(ctx, strings.Join(parts, " ; "))
	if err != nil {
		_ = es.Delete(context.Background())
		return nil, "", err
	}
	s.cur = &cursor{cmd: c}
	timeout := time.Second
	if req.StartupTimeout != nil {
		timeout = seconds(*req.StartupTimeout)
	}
	r, err := s.cur.wait(ctx, timeout, nil)
	if err != nil {
		_ = es.Delete(context.Background())
		var tmo *errWaitTimeout
		if errors.As(err, &tmo) {
			exc := newException(classPexpectTimeout, "Timeout exceeded while sourcing %s (startup_timeout %s s).", pyfmt.Repr(anyList(req.StartupSource)), pyfmt.Float(timeout.Seconds()))
			exc.ExtraInfo = map[string]any{"output": tmo.partial}
			return nil, "", exc
		}
		return nil, "", err
	}
	return s, r.text, nil
}

// close ends one session.
func (ss *sessions) close(ctx context.Context, name string) error {
	ss.mu.Lock()
	s := ss.byName[name]
	if s != nil {
		delete(ss.byName, name)
	}
	ss.mu.Unlock()
	if s == nil {
		return newException(classNoSession, "session %s does not exist", pyfmt.String(name))
	}
	return s.es.Delete(ctx)
}

// closeAll ends every session, in parallel.
func (ss *sessions) closeAll(ctx context.Context) {
	ss.mu.Lock()
	all := make([]*session, 0, len(ss.byName))
	for name, s := range ss.byName {
		if s != nil {
			all = append(all, s)
			delete(ss.byName, name)
		}
	}
	ss.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.es.Delete(ctx)
		}()
	}
	wg.Wait()
}

// seconds converts a Python float of seconds; negative reads as zero.
func seconds(f float64) time.Duration {
	if f <= 0 {
		return time.Nanosecond
	}
	if f > 1e9 {
		return 0 // no deadline worth keeping
	}
	return time.Duration(f * float64(time.Second))
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
