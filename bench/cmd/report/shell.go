package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/creack/pty"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/shell"
	"github.com/actionserver/actionserver/shell/ohrun"
)

// measureShellLatency measures the round trip of `true`: (a) the floor, a
// bare bash on a PTY fed `true` plus a marker; (b) through shell.Session in
// process; (c) through HTTP with the Go client.
func measureShellLatency(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	n := env.Iterations(2000)
	floor, err := ptyFloor(n)
	if err != nil {
		return nil, fmt.Errorf("pty floor: %w", err)
	}
	inproc, err := sessionLatency(ctx, env, n)
	if err != nil {
		return nil, fmt.Errorf("in-process: %w", err)
	}
	s, err := benchkit.StartServer(ctx, env)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	var viaHTTP []time.Duration
	for i := range n + n/10 {
		start := time.Now()
		obs, err := s.Client.Run(ctx, "true", client.RunOptions{Timeout: 10 * time.Second})
		if err != nil {
			return nil, err
		}
		if obs.Metadata.ExitCode != 0 {
			return nil, fmt.Errorf("true exited %d", obs.Metadata.ExitCode)
		}
		if i >= n/10 { // warm-up excluded
			viaHTTP = append(viaHTTP, time.Since(start))
		}
	}
	f50, f99 := benchkit.Percentile(floor, 50), benchkit.Percentile(floor, 99)
	i50, i99 := benchkit.Percentile(inproc, 50), benchkit.Percentile(inproc, 99)
	h50, h99 := benchkit.Percentile(viaHTTP, 50), benchkit.Percentile(viaHTTP, 99)
	return []benchkit.Row{
		{Metric: "`true`, raw PTY (floor) p50 / p99", Value: benchkit.Ms(f50) + " / " + benchkit.Ms(f99)},
		{Metric: "`true` via shell.Session p50 / p99", Value: benchkit.Ms(i50) + " / " + benchkit.Ms(i99),
			Floor: benchkit.Ms(f50), Ratio: benchkit.Ratio(float64(i50), float64(f50))},
		{Metric: "`true` via HTTP p50", Value: benchkit.Ms(h50), Floor: benchkit.Ms(f50),
			Ratio: benchkit.Ratio(float64(h50), float64(f50)), Target: "≤ 0.45 ms", OK: benchkit.Check(h50 <= 450*time.Microsecond)},
		{Metric: "`true` via HTTP p99", Value: benchkit.Ms(h99), Floor: benchkit.Ms(f99),
			Ratio: benchkit.Ratio(float64(h99), float64(f99)), Target: "≤ 0.9 ms", OK: benchkit.Check(h99 <= 900*time.Microsecond)},
	}, nil
}

// ptyFloor runs a bare bash on a PTY and times `true` followed by a marker
// the shell prints. The typed marker differs from the printed one so the
// terminal's echo cannot end the read early.
func ptyFloor(n int) ([]time.Duration, error) {
	cmd := exec.Command("bash", "--norc", "--noprofile")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PS1=", "PS2=", "TERM=dumb"}
	f, err := pty.Start(cmd)
	if err != nil {
		return nil, err
	}
	defer func() {
		f.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	buf := make([]byte, 4096)
	var acc []byte
	roundTrip := func() error {
		acc = acc[:0]
		if _, err := f.Write([]byte("true; echo __M\"\"__\n")); err != nil {
			return err
		}
		for !bytes.Contains(acc, []byte("__M__\r\n")) {
			k, err := f.Read(buf)
			if err != nil {
				return err
			}
			acc = append(acc, buf[:k]...)
		}
		return nil
	}
	var out []time.Duration
	for i := range n + n/10 {
		start := time.Now()
		if err := roundTrip(); err != nil {
			return nil, err
		}
		if i >= n/10 {
			out = append(out, time.Since(start))
		}
	}
	return out, nil
}

func sessionLatency(ctx context.Context, env *benchkit.Env, n int) ([]time.Duration, error) {
	dir, err := os.MkdirTemp("", "bench-shell-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	s, err := shell.Start(ctx, shell.Options{Dir: dir,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + env.Home, "TERM=xterm-256color"}})
	if err != nil {
		return nil, err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.Close(ctx)
	}()
	r := ohrun.New(s, ohrun.Options{})
	var out []time.Duration
	for i := range n + n/10 {
		start := time.Now()
		res, err := r.Run(ctx, ohrun.Request{Command: "true", Timeout: 10 * time.Second})
		if err != nil {
			return nil, err
		}
		if !res.Finished {
			return nil, fmt.Errorf("true did not finish: %+v", res)
		}
		if i >= n/10 {
			out = append(out, time.Since(start))
		}
	}
	return out, nil
}

// measureStartup measures the binary from exec to the first 200 from
// /alive, and its resident memory once idle, each in turn with the same for
// the start floor (bench/cmd/startfloor): a process that links and
// initialises the same packages and answers /alive from a one-route gin
// server. It also shows how much of each idle RSS is the binary's own
// pages, against the binary's size: the kernel maps a file's cached pages
// around each one a fault touches, so that part follows the binary's size
// more than the code that runs.
func measureStartup(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	var ready, floorReady []time.Duration
	var rss, floorRSS, file, floorFile []int64 // bytes
	for range env.Iterations(20) {
		d, m, err := startIdle(ctx, env, "action-server")
		if err != nil {
			return nil, err
		}
		ready, rss, file = append(ready, d), append(rss, m.rss), append(file, m.file)
		d, m, err = startIdle(ctx, env, "startfloor")
		if err != nil {
			return nil, err
		}
		floorReady, floorRSS, floorFile = append(floorReady, d), append(floorRSS, m.rss), append(floorFile, m.file)
	}
	size, err := os.Stat(filepath.Join(env.BinDir, "action-server"))
	if err != nil {
		return nil, err
	}
	floorSize, err := os.Stat(filepath.Join(env.BinDir, "startfloor"))
	if err != nil {
		return nil, err
	}
	r50, f50 := benchkit.Percentile(ready, 50), benchkit.Percentile(floorReady, 50)
	m50, fm50 := benchkit.Percentile(rss, 50), benchkit.Percentile(floorRSS, 50)
	b50, fb50 := benchkit.Percentile(file, 50), benchkit.Percentile(floorFile, 50)
	return []benchkit.Row{
		{Metric: "start to /alive (median)", Value: benchkit.Ms(r50), Floor: benchkit.Ms(f50) + " (start floor)",
			Ratio: benchkit.Ratio(float64(r50), float64(f50)), Target: "≤ 15 ms", OK: benchkit.Check(r50 <= 15*time.Millisecond)},
		{Metric: "idle RSS (median)", Value: benchkit.MB(m50), Floor: benchkit.MB(fm50) + " (start floor)",
			Ratio: benchkit.Ratio(float64(m50), float64(fm50)), Target: "≤ 11 MB", OK: benchkit.Check(m50 <= 11<<20)},
		{Metric: "… of it, the binary's pages (RssFile, median) / the binary's size",
			Value: benchkit.MB(b50) + " / " + benchkit.MB(size.Size()), Floor: benchkit.MB(fb50) + " / " + benchkit.MB(floorSize.Size()) + " (start floor)"},
	}, nil
}

// idleMemory is a process's resident memory once idle, in bytes: all of it,
// and the part that maps files.
type idleMemory struct{ rss, file int64 }

// startIdle starts the binary name of env.BinDir, lets it idle for half a
// second and stops it. It returns the time to its first 200 from /alive
// and its resident memory when idle.
func startIdle(ctx context.Context, env *benchkit.Env, name string) (time.Duration, idleMemory, error) {
	s, err := benchkit.StartBinary(ctx, env, name)
	if err != nil {
		return 0, idleMemory{}, err
	}
	defer s.Stop()
	time.Sleep(500 * time.Millisecond)
	var m idleMemory
	if m.rss, err = benchkit.RSS(s.Cmd.Process.Pid, false); err != nil {
		return 0, m, err
	}
	m.file, err = benchkit.FileRSS(s.Cmd.Process.Pid)
	return s.Ready, m, err
}
