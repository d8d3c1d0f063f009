package shell

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// finishedCommand is a command whose output r holds, finished, in a
// process whose private directory is dir.
func finishedCommand(r *ring, dir string) *Command {
	done := make(chan struct{})
	close(done)
	p := &process{dir: dir}
	return &Command{out: r, done: done, proc: p, mu: &p.mu}
}

func TestSpill_EveryByteReadsTheSameFromTheFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, tc := range []struct {
		name          string
		limit, writes int
	}{
		{"never wrapped", 1 << 20, 3},
		{"wrapped many times", 100 << 10, 40},
		{"exactly the limit", spillMin, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, r := newRing(tc.limit), newRing(tc.limit)
			for range tc.writes {
				size := rng.IntN(tc.limit/2) + tc.limit/2
				if tc.writes == 1 {
					size = tc.limit
				}
				chunk := make([]byte, size)
				for j := range chunk {
					chunk[j] = "xy\n"[rng.IntN(3)]
				}
				mem.Write(chunk)
				r.Write(chunk)
			}
			c := finishedCommand(r, t.TempDir())
			c.spill()
			require.NotNil(t, r.file, "the output moved to a file")
			assert.Nil(t, r.blocks, "and left the heap")
			entries, err := os.ReadDir(c.proc.dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "the file is unlinked")

			for _, off := range []int64{0, mem.start(), mem.start() + 1, mem.start() + 70000, mem.total - 1, mem.total} {
				for _, n := range []int{-1, 1, 4096, 100000} {
					want, wantLost := mem.ReadFrom(off, n)
					got, gotLost := r.ReadFrom(off, n)
					require.Equal(t, wantLost, gotLost, "off %d n %d", off, n)
					require.True(t, bytes.Equal(want, got), "off %d n %d", off, n)
				}
			}
			for _, n := range []int{0, 1, 2, 5, 1000, 1 << 20} {
				assert.Equal(t, mem.lineStart(n), r.lineStart(n), "lineStart(%d)", n)
			}
			// Output after the end (rare) brings it back into memory.
			mem.Write([]byte("late\n"))
			r.Write([]byte("late\n"))
			assert.Nil(t, r.file)
			got, _ := r.ReadFrom(0, -1)
			want, _ := mem.ReadFrom(0, -1)
			assert.True(t, bytes.Equal(want, got), "after a late write")
		})
	}
}

func TestSpill_SmallOutputStaysInMemory(t *testing.T) {
	r := newRing(1 << 20)
	r.Write(bytes.Repeat([]byte("a"), spillMin-1))
	c := finishedCommand(r, t.TempDir())
	spillLater(c)
	c.spill()
	assert.Nil(t, r.file)
}

func TestSpill_ReleaseClosesTheFile(t *testing.T) {
	r := newRing(1 << 20)
	r.Write(bytes.Repeat([]byte("a\n"), spillMin))
	c := finishedCommand(r, t.TempDir())
	c.spill()
	f := r.file
	require.NotNil(t, f)
	r.release()
	assert.Nil(t, r.file)
	_, err := f.Stat()
	assert.ErrorIs(t, err, os.ErrClosed)
	got, lost := r.ReadFrom(0, -1)
	assert.Empty(t, got)
	assert.Equal(t, int64(2*spillMin), lost, "released output counts as dropped")
}

// A real command's bulk output leaves the heap once it finished, and reads
// back the same by offset.
func TestSpill_FinishedCommandOutputMovesToAFile(t *testing.T) {
	s := newSession(t, func(o *Options) { o.Budget = NewOutputBudget(64 << 20) })
	c, err := s.Start(context.Background(), "seq 1 100000")
	require.NoError(t, err)
	select {
	case <-c.Done():
	case <-time.After(time.Minute):
		t.Fatal("command did not finish")
	}
	require.Eventually(t, func() bool {
		c.proc.mu.Lock()
		defer c.proc.mu.Unlock()
		return c.out.file != nil
	}, 10*time.Second, 10*time.Millisecond, "output moved to a file")
	got := readAll(t, c, 50000)
	want, err := exec.Command("seq", "1", "100000").Output()
	require.NoError(t, err)
	assert.Equal(t, string(bytes.TrimSuffix(want, []byte("\n"))), string(bytes.TrimSuffix(got, []byte("\n"))))
}

// With a budget, a session's finished output on disk does not count
// against its in-memory share (OutputLimit): the budget bounds it, so
// bulk output of many commands stays readable. Without one, the in-memory
// rule still forgets older output.
func TestSpill_SessionKeepsMoreThanOutputLimitOnDiskUnderABudget(t *testing.T) {
	for _, tc := range []struct {
		name         string
		budget       *OutputBudget
		wantReadable int
	}{
		{"with a budget", NewOutputBudget(64 << 20), 4},
		{"without one", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, func(o *Options) { o.OutputLimit = 100 << 10; o.Budget = tc.budget })
			var cmds []*Command
			for range 4 {
				c, err := s.Start(context.Background(), "seq 1 15000")
				require.NoError(t, err)
				<-c.Done()
				// Let it move to its file before the next one starts,
				// as a client reading it would.
				require.Eventually(t, func() bool {
					c.proc.mu.Lock()
					defer c.proc.mu.Unlock()
					return c.out.file != nil
				}, 10*time.Second, 5*time.Millisecond)
				cmds = append(cmds, c)
			}
			c, err := s.Start(context.Background(), "true")
			require.NoError(t, err)
			<-c.Done()
			readable := 0
			for _, c := range cmds {
				if ch := c.Read(0, -1); ch.Lost == 0 && len(ch.Data) > 70000 {
					readable++
				}
			}
			assert.GreaterOrEqual(t, readable, tc.wantReadable)
			if tc.budget == nil {
				assert.Less(t, readable, 4, "the in-memory rule forgets older output")
			}
		})
	}
}

// A command the session's history forgets frees its file at once, not when
// the collector finds it: the descriptor is closed and its output reads as
// dropped.
func TestSpill_ForgottenCommandClosesItsFile(t *testing.T) {
	s := newSession(t, func(o *Options) { o.Budget = NewOutputBudget(64 << 20) })
	var first *Command
	var file *os.File
	for i := range historySize + 1 {
		c, err := s.Start(context.Background(), "seq 1 15000")
		require.NoError(t, err)
		<-c.Done()
		if i == 0 {
			first = c
			require.Eventually(t, func() bool {
				c.proc.mu.Lock()
				defer c.proc.mu.Unlock()
				file = c.out.file
				return file != nil
			}, 10*time.Second, 5*time.Millisecond)
		}
	}
	_, ok := s.Command(first.ID)
	require.False(t, ok, "the history forgot the first command")
	_, err := file.Stat()
	assert.ErrorIs(t, err, os.ErrClosed)
	assert.Positive(t, first.Read(0, -1).Lost)
}
