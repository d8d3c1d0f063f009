package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/actionserver/actionserver/executor"
)

// BenchmarkExecuteAction_True measures `true` through /execute_action over
// loopback HTTP, the request and its full observation, with the request
// log at its default (info) level.
func BenchmarkExecuteAction_True(b *testing.B) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := New(Options{Logger: log})
	e, err := executor.New(context.Background(), executor.Options{
		WorkDir: b.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir()},
		Logger:  log,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		e.Close(ctx)
	}()
	s.SetReady(e)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	body := []byte(`{"action":{"action":"run","args":{"command":"true","is_input":false,"thought":"","blocking":false,"is_static":false,"cwd":null,"hidden":false,"confirmation_state":"confirmed","security_risk":-1},"timeout":120}}`)
	for b.Loop() {
		resp, err := http.Post(srv.URL+"/execute_action", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
