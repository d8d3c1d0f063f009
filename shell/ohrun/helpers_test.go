package ohrun

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/shell"
)

// The tests of Run drive a shell session through its Runner, as the
// executor does; Session lets them call either.

var ErrClosed = shell.ErrClosed

// Session is a shell session with its Runner, and the engine's options it
// was started with.
type Session struct {
	*shell.Session
	*Runner
	opts shell.Options
}

// setup is what a test may change before its session starts: the
// engine's options and the policy's.
type setup struct {
	shell shell.Options
	run   Options
}

// newSession starts a session in a fresh directory with a clean HOME, so a
// developer's own ~/.bashrc cannot change results.
func newSession(t testing.TB, mod func(*setup)) *Session {
	t.Helper()
	home := t.TempDir()
	o := setup{
		shell: shell.Options{
			Dir: t.TempDir(),
			Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TERM=xterm-256color", "LANG=C.UTF-8"},
		},
		run: Options{NoChangeTimeout: 2 * time.Second},
	}
	if mod != nil {
		mod(&o)
	}
	sh, err := shell.Start(context.Background(), o.shell)
	require.NoError(t, err)
	s := &Session{Session: sh, Runner: New(sh, o.run), opts: o.shell}
	if s.opts.OutputLimit <= 0 {
		s.opts.OutputLimit = 8 << 20 // shell's default
	}
	t.Cleanup(func() { closeSession(s) })
	return s
}

// closeSession closes s, giving its processes a second to end.
func closeSession(s *Session) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.Session.Close(ctx)
}
