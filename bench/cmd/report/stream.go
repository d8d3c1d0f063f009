package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/creack/pty"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/bench/internal/benchkit"
	"github.com/actionserver/actionserver/client"
)

// streamSize is how much the streamed command prints.
const streamSize = 100 << 20

// measureStream measures following a command that prints 100 MB through the
// sessions API's Server-Sent Events, against `cat` of the same bytes to
// /dev/null, and checks that every byte arrived (none lost).
func measureStream(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	dir, err := os.MkdirTemp("", "bench-stream-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "lines.txt")
	// Text lines, as commands print: 100 MB of 64-byte lines.
	line := []byte("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.\n")
	f, err := os.Create(src)
	if err != nil {
		return nil, err
	}
	block := make([]byte, 0, 1<<20)
	for len(block)+len(line) <= cap(block) {
		block = append(block, line...)
	}
	for n := 0; n < streamSize; n += len(block) {
		if _, err := f.Write(block); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	fi, _ := os.Stat(src)
	size := fi.Size()

	reps := 3
	var floor, ptyFloor, ours []float64
	for range reps {
		start := time.Now()
		if err := exec.Command("sh", "-c", "cat "+src+" > /dev/null").Run(); err != nil {
			return nil, err
		}
		floor = append(floor, mbps(size, time.Since(start)))

		// Every command's output crosses a terminal: the same cat read
		// from a bare PTY is the floor that matters.
		start = time.Now()
		c := exec.Command("cat", src)
		tty, err := pty.Start(c)
		if err != nil {
			return nil, err
		}
		io.Copy(io.Discard, tty) // ends with EIO when cat exits
		c.Wait()
		tty.Close()
		ptyFloor = append(ptyFloor, mbps(size, time.Since(start)))
	}
	s, err := benchkit.StartServer(ctx, env)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	lost := int64(0)
	for i := range reps {
		id := fmt.Sprintf("stream%d", i)
		if _, err := s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: id}); err != nil {
			return nil, err
		}
		start := time.Now()
		cmd, err := s.Client.StartCommand(ctx, id, "cat "+src)
		if err != nil {
			return nil, err
		}
		var got int64
		for ev := range s.Client.Stream(ctx, id, cmd.ID, client.StreamOptions{}) {
			switch ev.Kind {
			case "output":
				got += int64(len(ev.Data))
			case "lost":
				lost += ev.Lost
			case "exit":
				if ev.Err != nil {
					return nil, ev.Err
				}
			}
		}
		elapsed := time.Since(start)
		// The terminal turns each "\n" into "\r\n", and the server keeps
		// lines as printed: count the bytes of the file that arrived.
		if got < size {
			return nil, fmt.Errorf("streamed %d bytes of %d (lost %d)", got, size, lost)
		}
		ours = append(ours, mbps(size, elapsed))
		s.Client.DeleteSession(ctx, id)
	}
	o, fl, pf := median(ours), median(floor), median(ptyFloor)
	return []benchkit.Row{
		{Metric: "stream a command printing 100 MB (SSE) median, bytes lost", Value: fmt.Sprintf("%.0f MB/s, %d lost", o, lost),
			Floor: fmt.Sprintf("%.0f MB/s (cat from a raw PTY)", pf), Ratio: benchkit.Ratio(o, pf)},
		{Metric: "… the same against cat > /dev/null", Value: fmt.Sprintf("%.0f MB/s", o),
			Floor: fmt.Sprintf("%.0f MB/s", fl), Ratio: benchkit.Ratio(o, fl)},
	}, nil
}
