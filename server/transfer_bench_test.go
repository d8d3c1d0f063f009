package server

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/executor"
)

const benchTransferSize = 64 << 20

// newBenchServer serves a real executor on loopback.
func newBenchServer(b *testing.B) (*client.Client, string) {
	b.Helper()
	dir := b.TempDir()
	e, err := executor.New(context.Background(), executor.Options{WorkDir: dir, Env: []string{"PATH=" + os.Getenv("PATH")},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		e.Close(ctx)
	})
	s := New(Options{IdleTrim: -1, Logger: slog.New(slog.DiscardHandler)})
	s.SetReady(e)
	hs := httptest.NewServer(s.Handler())
	b.Cleanup(hs.Close)
	return client.New(hs.URL), dir
}

func benchPayload(b *testing.B, dir string) string {
	b.Helper()
	p := filepath.Join(dir, "payload.bin")
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i * 7)
	}
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	for n := 0; n < benchTransferSize; n += len(chunk) {
		f.Write(chunk)
	}
	f.Close()
	return p
}

// BenchmarkUpload measures a multipart upload through the whole stack.
func BenchmarkUpload(b *testing.B) {
	c, dir := newBenchServer(b)
	src := benchPayload(b, b.TempDir())
	dest := filepath.Join(dir, "in")
	b.SetBytes(benchTransferSize)
	b.ResetTimer()
	for range b.N {
		if err := c.Upload(context.Background(), src, dest, false, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDownload measures a zip download through the whole stack.
func BenchmarkDownload(b *testing.B) {
	c, dir := newBenchServer(b)
	src := filepath.Join(dir, "out")
	os.Mkdir(src, 0o755)
	benchPayload(b, src)
	b.SetBytes(benchTransferSize)
	b.ResetTimer()
	for range b.N {
		if _, err := c.Download(context.Background(), src, io.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
}
