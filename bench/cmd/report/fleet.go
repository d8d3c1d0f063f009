package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/bench/internal/benchkit"
	"github.com/actionserver/actionserver/client"
)

// The scenarios of running a fleet: how many idle servers a machine holds,
// whether memory comes back after bulk output, and how fast readiness
// turns on SIGTERM.

// measureDensity starts N idle servers side by side and sums their
// proportional set size (PSS, /proc/PID/smaps_rollup): pages shared
// between them, the binary's code first, count once in total, which RSS
// would count N times. Each server's default bash is counted beside it.
func measureDensity(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	var rows []benchkit.Row
	for _, n := range []int{1, 10, 50} {
		servers := make([]*benchkit.Server, 0, n)
		stopAll := func() {
			var wg sync.WaitGroup
			for _, s := range servers {
				wg.Go(s.Stop)
			}
			wg.Wait()
		}
		for range n {
			s, err := benchkit.StartServer(ctx, env)
			if err != nil {
				stopAll()
				return nil, err
			}
			servers = append(servers, s)
		}
		// Each server trims its heap a second after its last request,
		// and its shell is up well before then.
		time.Sleep(2500 * time.Millisecond)
		var server, shells int64
		for _, s := range servers {
			pid := s.Cmd.Process.Pid
			p, err := pss(pid)
			if err != nil {
				stopAll()
				return nil, err
			}
			server += p
			for child := range childrenOf(pid) {
				p, _ := pss(child) // a child may be gone; it then costs nothing
				shells += p
			}
		}
		stopAll()
		env.Logf("  density %d: servers %s, their shells %s", n, benchkit.MB(server), benchkit.MB(shells))
		rows = append(rows,
			benchkit.Row{Metric: fmt.Sprintf("density: PSS of %d idle server(s) on one machine, per server (total)", n),
				Value: fmt.Sprintf("%s (%s)", benchkit.MB(server/int64(n)), benchkit.MB(server))},
			benchkit.Row{Metric: "density: … with each one's default bash, per server (total)",
				Value: fmt.Sprintf("%s (%s)", benchkit.MB((server+shells)/int64(n)), benchkit.MB(server+shells))})
	}
	return rows, nil
}

// measureAnonAfterBulkOutput prints `seq 1 1000000` (6.9 MB) nine times in
// one session, reading each output whole, and compares the server's
// anonymous memory (RssAnon: its heap and stacks, not the binary's pages
// nor the page cache) two seconds later with its idle figure; then reads
// every command's output again by offset, to show none of it was lost.
func measureAnonAfterBulkOutput(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	const runs = 9
	s, err := benchkit.StartServer(ctx, env)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	pid := s.Cmd.Process.Pid
	if _, err := s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: "bulk"}); err != nil {
		return nil, err
	}
	// Idle is measured with the session open and one small command run,
	// so the figure compares output kept, not a session's own state.
	small, err := s.Client.StartCommand(ctx, "bulk", "true")
	if err != nil {
		return nil, err
	}
	if _, err := waitCommand(ctx, s.Client, "bulk", small.ID); err != nil {
		return nil, err
	}
	time.Sleep(2500 * time.Millisecond)
	idle, err := anonRSS(pid)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for range runs {
		cmd, err := s.Client.StartCommand(ctx, "bulk", "seq 1 1000000")
		if err != nil {
			return nil, err
		}
		got := 0
		for ev := range s.Client.Stream(ctx, "bulk", cmd.ID, client.StreamOptions{}) {
			if ev.Err != nil {
				return nil, ev.Err
			}
			got += len(ev.Data)
		}
		if got != seqOutput {
			return nil, fmt.Errorf("streamed %d bytes of %d", got, seqOutput)
		}
		ids = append(ids, cmd.ID)
	}
	just, _ := anonRSS(pid)
	peak, _ := benchkit.RSS(pid, true)
	time.Sleep(2 * time.Second)
	after, err := anonRSS(pid)
	if err != nil {
		return nil, err
	}
	// Every byte of every command is still there, read by offset.
	readable := 0
	for _, id := range ids {
		off := int64(0)
		for {
			ch, err := s.Client.Output(ctx, "bulk", id, off, 0)
			if err != nil {
				return nil, err
			}
			if ch.Lost > 0 {
				break
			}
			readable += len(ch.Data)
			off = ch.NextOffset
			if ch.Done {
				break
			}
		}
	}
	env.Logf("  RssAnon idle %s, just after %s, 2 s later %s; peak RSS %s; %d of %d bytes readable again",
		benchkit.MB(idle), benchkit.MB(just), benchkit.MB(after), benchkit.MB(peak), readable, runs*seqOutput)
	return []benchkit.Row{
		{Metric: fmt.Sprintf("RssAnon just after %d × `seq 1 1000000` read in one session (idle %s)", runs, benchkit.MB(idle)),
			Value: benchkit.MB(just)},
		{Metric: "… 2 s later", Value: benchkit.MB(after), Floor: benchkit.MB(idle) + " (idle)",
			Ratio: benchkit.Ratio(float64(after), float64(idle)), Target: "≤ idle + 2 MiB", OK: benchkit.Check(after <= idle+2<<20)},
		{Metric: "… bytes still readable by offset afterwards", Value: fmt.Sprintf("%d of %d", readable, runs*seqOutput),
			Target: "all (default --output-budget 64M)", OK: benchkit.Check(readable == runs*seqOutput)},
	}, nil
}

// measureReadinessFlip sends SIGTERM to a server whose /readyz is polled
// back to back, and times the first 503. The server keeps its listener for
// SHUTDOWN_DRAIN_SECONDS after it, so the poll sees the flip rather than a
// closed port.
func measureReadinessFlip(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	reps := env.Iterations(30)
	var flips, exits []time.Duration
	for range reps {
		s, err := benchkit.StartBinaryEnv(ctx, env, "action-server", []string{"SHUTDOWN_DRAIN_SECONDS=0.3"})
		if err != nil {
			return nil, err
		}
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
		get := func() int {
			resp, err := hc.Get(s.URL + "/readyz")
			if err != nil {
				return 0
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if code := get(); code != http.StatusOK {
			s.Stop()
			return nil, fmt.Errorf("/readyz answered %d before SIGTERM", code)
		}
		exited := make(chan struct{})
		go func() { s.Cmd.Wait(); close(exited) }()
		start := time.Now()
		if err := s.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
			return nil, err
		}
		var flip time.Duration
		for flip == 0 && time.Since(start) < 5*time.Second {
			if get() == http.StatusServiceUnavailable {
				flip = time.Since(start)
			}
		}
		<-exited
		exits = append(exits, time.Since(start))
		os.RemoveAll(s.WorkDir) // what Stop would have done
		hc.CloseIdleConnections()
		if flip == 0 {
			return nil, fmt.Errorf("/readyz never answered 503 after SIGTERM")
		}
		flips = append(flips, flip)
	}
	p50, worst := benchkit.Percentile(flips, 50), benchkit.Percentile(flips, 100)
	return []benchkit.Row{
		{Metric: fmt.Sprintf("SIGTERM to /readyz 503, p50 / max of %d", reps), Value: benchkit.Ms(p50) + " / " + benchkit.Ms(worst),
			Target: "≤ 100 ms", OK: benchkit.Check(worst <= 100*time.Millisecond)},
		{Metric: "SIGTERM to exit, idle server, SHUTDOWN_DRAIN_SECONDS=0.3, p50", Value: benchkit.Ms(benchkit.Percentile(exits, 50)),
			Target: "≤ 5 s", OK: benchkit.Check(benchkit.Percentile(exits, 100) <= 5*time.Second)},
	}, nil
}

// pss returns a process's proportional set size in bytes.
func pss(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	return kbField(data, "Pss:")
}

// anonRSS returns a process's anonymous resident memory (RssAnon).
func anonRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return kbField(data, "RssAnon:")
}

// kbField reads a "Name:   123 kB" line of a /proc file, in bytes.
func kbField(data []byte, key string) (int64, error) {
	for _, line := range bytes.Split(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(key)); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(v)), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s", key)
}
