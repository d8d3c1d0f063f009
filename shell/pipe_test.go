package shell

import (
	"context"
	"crypto/sha256"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitDone waits until c finishes.
func waitDone(t *testing.T, c *Command) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(time.Minute):
		t.Fatal("piped command did not finish")
	}
}

func TestStartPipe_EveryByteOnceAndTheExitCode(t *testing.T) {
	s := newSession(t, nil)
	c, err := s.StartPipe(context.Background(), "seq 1 300000; exit 3", PipeOptions{})
	require.NoError(t, err)
	got := readAll(t, c, 100_003)

	want, err := exec.Command("seq", "1", "300000").Output()
	require.NoError(t, err)
	// Bytes as written: no terminal turns "\n" into "\r\n" or trims.
	assert.Equal(t, sha256.Sum256(want), sha256.Sum256(got))
	st := c.Status()
	assert.False(t, st.Running)
	assert.Equal(t, 3, st.Metadata.ExitCode)
	found, ok := s.Command(c.ID)
	require.True(t, ok, "a piped command is found by id like any other")
	assert.Same(t, c, found)
}

func TestStartPipe_TakesTheSessionsDirectoryAndEnvironment(t *testing.T) {
	s := newSession(t, func(o *Options) { o.Env = append(o.Env, "FROM_SESSION=yes") })
	sub := filepath.Join(s.Cwd(), "sub")
	res := run(t, s, Request{Command: "mkdir sub && cd sub", Timeout: 10 * time.Second})
	require.Equal(t, 0, res.Metadata.ExitCode)

	tests := []struct {
		name string
		opts PipeOptions
		want string
	}{
		{"the terminal's directory", PipeOptions{}, sub + " yes -"},
		{"a directory and a variable of its own", PipeOptions{Dir: "/", Env: map[string]string{"EXTRA": "1"}}, "/ yes 1"},
		{"a variable overridden", PipeOptions{Env: map[string]string{"FROM_SESSION": "no"}}, sub + " no -"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := s.StartPipe(context.Background(), `echo "$PWD $FROM_SESSION ${EXTRA:--}"`, tc.opts)
			require.NoError(t, err)
			assert.Equal(t, tc.want+"\n", string(readAll(t, c, -1)))
			assert.Equal(t, 0, c.Status().Metadata.ExitCode)
		})
	}
}

func TestStartPipe_StderrAndNoTerminal(t *testing.T) {
	s := newSession(t, nil)
	c, err := s.StartPipe(context.Background(), `echo out; echo err >&2; [ -t 1 ] && echo tty || echo notty; read -r x; echo "in=[$x]"`, PipeOptions{})
	require.NoError(t, err)
	assert.Equal(t, "out\nerr\nnotty\nin=[]\n", string(readAll(t, c, -1)))
}

func TestStartPipe_RunsBesideTheTerminal(t *testing.T) {
	s := newSession(t, nil)
	term, err := s.Start(context.Background(), "sleep 30")
	require.NoError(t, err)
	c, err := s.StartPipe(context.Background(), "echo beside", PipeOptions{})
	require.NoError(t, err)
	assert.Equal(t, "beside\n", string(readAll(t, c, -1)))
	running, ok := s.Running()
	require.True(t, ok, "the terminal's command still runs")
	assert.Equal(t, term.ID, running.ID)
	require.NoError(t, s.Signal(syscall.SIGINT))
}

func TestSignalPipe_EndsTheCommandAndWhatItStarted(t *testing.T) {
	s := newSession(t, nil)
	c, err := s.StartPipe(context.Background(), "sleep 60 & sleep 60; echo never", PipeOptions{})
	require.NoError(t, err)
	require.NoError(t, s.SignalPipe(c.ID, syscall.SIGTERM))
	waitDone(t, c)
	assert.Equal(t, 128+int(syscall.SIGTERM), c.Status().Metadata.ExitCode)
	assert.NotContains(t, string(readAll(t, c, -1)), "never")
	assert.ErrorIs(t, s.SignalPipe(c.ID, syscall.SIGTERM), ErrNotRunning, "a finished command takes no signal")
}

func TestStartPipe_SessionCloseEndsIt(t *testing.T) {
	s := newSession(t, nil)
	c, err := s.StartPipe(context.Background(), "sleep 60", PipeOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	s.Close(ctx)
	waitDone(t, c)
	assert.NotEqual(t, 0, c.Status().Metadata.ExitCode)
	_, err = s.StartPipe(context.Background(), "true", PipeOptions{})
	assert.ErrorIs(t, err, ErrClosed)
}

func TestStartPipe_OutputLimitDropsTheOldest(t *testing.T) {
	s := newSession(t, func(o *Options) { o.OutputLimit = 1000 })
	c, err := s.StartPipe(context.Background(), "seq 1 10000", PipeOptions{})
	require.NoError(t, err)
	waitDone(t, c)
	ch := c.Read(0, -1)
	assert.Positive(t, ch.Lost, "the reader is told what was dropped")
	assert.True(t, strings.HasSuffix(string(ch.Data), "\n10000\n"))
	assert.LessOrEqual(t, len(ch.Data), 1000)
}

// TestStartPipe_CommandHasItsOwnLockAndNoShell: a piped command runs in
// no bash of the session's, so it has none (a made-up one would be read
// as a shell by whatever looks), and its lock is its own, never the
// terminal's.
func TestStartPipe_CommandHasItsOwnLockAndNoShell(t *testing.T) {
	s := newSession(t, nil)
	c, err := s.StartPipe(context.Background(), "echo piped", PipeOptions{})
	require.NoError(t, err)
	waitDone(t, c)
	assert.Nil(t, c.proc, "a piped command has no shell")
	require.NotNil(t, c.mu)
	assert.NotSame(t, &s.proc.mu, c.mu)

	// The terminal's lock held (its reader busy) does not stop a piped
	// command's reads.
	s.proc.mu.Lock()
	defer s.proc.mu.Unlock()
	assert.Equal(t, "piped\n", string(c.Read(0, -1).Data))
	assert.False(t, c.Status().Running)
}
