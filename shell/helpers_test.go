package shell

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newSession starts a session in a fresh directory with a clean HOME, so a
// developer's own ~/.bashrc cannot change results.
func newSession(t *testing.T, mod func(*Options)) *Session {
	t.Helper()
	home := t.TempDir()
	opts := Options{
		Dir: t.TempDir(),
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TERM=xterm-256color", "LANG=C.UTF-8"},
	}
	if mod != nil {
		mod(&opts)
	}
	s, err := Start(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { closeSession(s) })
	return s
}

// closeSession closes s, giving its processes a second to end.
func closeSession(s *Session) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.Close(ctx)
}

// The engine's own tests set a session up with commands run to their end
// through a turn, as a policy would; OpenHands' policy and its tests are
// in package ohrun.

// Request is a command for run.
type Request struct {
	Command  string
	IsInput  bool // unused: kept so requests read as ohrun's
	Blocking bool
	// Timeout bounds the wait; default a minute.
	Timeout time.Duration
}

// Result is what run saw of a finished command.
type Result struct {
	Content  string
	Finished bool
	Metadata Metadata
}

func cmd(c string) Request { return Request{Command: c} }

// done is a request expected to complete.
func done(c string, input bool) Request {
	return Request{Command: c, IsInput: input, Blocking: true, Timeout: 30 * time.Second}
}

// run runs req.Command to its end and returns its output, trimmed, and
// its metadata; the session's directory follows it, as ohrun's does.
func run(t *testing.T, s *Session, req Request) Result {
	t.Helper()
	wait := req.Timeout
	if wait <= 0 {
		wait = time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	turn, err := s.Acquire(ctx)
	require.NoError(t, err, "command %q", req.Command)
	defer turn.Release()
	c, err := turn.Begin(req.Command)
	require.NoError(t, err, "command %q", req.Command)
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatalf("command %q did not finish", req.Command)
	}
	st := c.Status()
	turn.SetCwd(st.Metadata.WorkingDir)
	return Result{Content: strings.TrimSpace(string(c.Read(0, -1).Data)), Finished: true, Metadata: st.Metadata}
}

// lastLines is ohrun's cut to the last n lines (a final newline does not
// start a line), the reference lineStart is held to.
func lastLines(text string, n int, truncated bool) (string, bool) {
	body := strings.TrimSuffix(text, "\n")
	if strings.Count(body, "\n") < n {
		return text, truncated
	}
	cut := len(body)
	for range n {
		cut = strings.LastIndexByte(body[:cut], '\n')
	}
	return text[cut+1:], true
}
