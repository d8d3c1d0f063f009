package server

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/executor"
)

// seqBytes is the size of the output of `seq 1 1000000`.
const seqBytes = 6888896

// benchServer serves a ready server on loopback for a benchmark.
func benchServer(b *testing.B) *client.Client {
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
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		e.Close(ctx)
	})
	s.SetReady(e)
	srv := httptest.NewServer(s.Handler())
	b.Cleanup(srv.Close)
	return client.New(srv.URL)
}

// BenchmarkPipeSeq_SSE measures `seq 1 1000000` in pipe mode with every
// byte streamed to the Go client.
func BenchmarkPipeSeq_SSE(b *testing.B) {
	cl := benchServer(b)
	ctx := context.Background()
	b.SetBytes(seqBytes)
	for b.Loop() {
		cmd, err := cl.StartPipe(ctx, "default", "seq 1 1000000", client.PipeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		streamAll(ctx, b, cl, cmd.ID)
	}
}

// BenchmarkPipeSeq_LongPoll is BenchmarkPipeSeq_SSE with output read by
// long polls.
func BenchmarkPipeSeq_LongPoll(b *testing.B) {
	cl := benchServer(b)
	ctx := context.Background()
	b.SetBytes(seqBytes)
	for b.Loop() {
		cmd, err := cl.StartPipe(ctx, "default", "seq 1 1000000", client.PipeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(longPollAll(ctx, b, cl, cmd.ID)), "requests/op")
	}
}

// BenchmarkPipeSeq_Raw is BenchmarkPipeSeq_LongPoll with raw reads
// (format=raw): no JSON.
func BenchmarkPipeSeq_Raw(b *testing.B) {
	cl := benchServer(b)
	ctx := context.Background()
	b.SetBytes(seqBytes)
	var buf []byte
	for b.Loop() {
		cmd, err := cl.StartPipe(ctx, "default", "seq 1 1000000", client.PipeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		off, n, requests := int64(0), 0, 0
		for {
			ch, err := cl.OutputRaw(ctx, "default", cmd.ID, off, 10*time.Second, 0, buf[:0])
			if err != nil {
				b.Fatal(err)
			}
			buf = ch.Data
			requests++
			n += len(ch.Data)
			off = ch.NextOffset
			if ch.Done {
				break
			}
		}
		if n != seqBytes {
			b.Fatalf("got %d bytes", n)
		}
		b.ReportMetric(float64(requests), "requests/op")
	}
}
