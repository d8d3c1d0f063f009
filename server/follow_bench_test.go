package server

import (
	"context"
	"testing"
	"time"

	"github.com/actionserver/actionserver/client"
)

// BenchmarkTerminalSeq_SSE measures `seq 1 1000000` run in the terminal,
// every byte streamed to the Go client.
func BenchmarkTerminalSeq_SSE(b *testing.B) {
	cl := benchServer(b)
	ctx := context.Background()
	b.SetBytes(seqBytes)
	for b.Loop() {
		cmd, err := cl.StartCommand(ctx, "default", "seq 1 1000000")
		if err != nil {
			b.Fatal(err)
		}
		streamAll(ctx, b, cl, cmd.ID)
	}
}

// BenchmarkTerminalSeq_LongPoll is BenchmarkTerminalSeq_SSE by JSON long
// polls.
func BenchmarkTerminalSeq_LongPoll(b *testing.B) {
	cl := benchServer(b)
	ctx := context.Background()
	b.SetBytes(seqBytes)
	for b.Loop() {
		cmd, err := cl.StartCommand(ctx, "default", "seq 1 1000000")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(longPollAll(ctx, b, cl, cmd.ID)), "requests/op")
	}
}

// BenchmarkTerminalSeq_NoReader is BenchmarkTerminalSeq_SSE with nobody
// following: the terminal and the server's screen alone.
func BenchmarkTerminalSeq_NoReader(b *testing.B) {
	cl := benchServer(b)
	ctx := context.Background()
	b.SetBytes(seqBytes)
	for b.Loop() {
		cmd, err := cl.StartCommand(ctx, "default", "seq 1 1000000")
		if err != nil {
			b.Fatal(err)
		}
		for {
			c, err := cl.Command(ctx, "default", cmd.ID)
			if err != nil {
				b.Fatal(err)
			}
			if !c.Running {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// longPollAll reads a command's whole output of the default session by
// JSON long polls, checks it is all of seq's, and returns the requests it
// took.
func longPollAll(ctx context.Context, b *testing.B, cl *client.Client, id int64) int {
	b.Helper()
	off, n, requests := int64(0), 0, 0
	for {
		ch, err := cl.Output(ctx, "default", id, off, 10*time.Second)
		if err != nil {
			b.Fatal(err)
		}
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
	return requests
}

// streamAll reads a command's whole output of the default session by SSE
// and checks it is all of seq's.
func streamAll(ctx context.Context, b *testing.B, cl *client.Client, id int64) {
	b.Helper()
	n := 0
	for ev := range cl.Stream(ctx, "default", id, client.StreamOptions{}) {
		n += len(ev.Data)
	}
	if n != seqBytes {
		b.Fatalf("got %d bytes", n)
	}
}
