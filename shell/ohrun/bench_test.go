package ohrun

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/actionserver/actionserver/shell"
)

// BenchmarkRun_True measures one command round trip through a session.
func BenchmarkRun_True(b *testing.B) {
	sh, err := shell.Start(context.Background(), shell.Options{Dir: b.TempDir(),
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir(), "TERM=xterm-256color"}})
	if err != nil {
		b.Fatal(err)
	}
	s := &Session{Session: sh, Runner: New(sh, Options{})}
	defer closeSession(s)
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Run(ctx, Request{Command: "true", Timeout: 10 * time.Second}); err != nil {
			b.Fatal(err)
		}
	}
}
