package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"time"

	"github.com/creack/pty"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/bench/internal/benchkit"
	"github.com/actionserver/actionserver/client"
)

// measureHTTPFloor measures an empty loopback HTTP round trip with net/http, the
// floor under every API call.
func measureHTTPFloor(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"status":"ok"}`))
	})}
	go srv.Serve(l)
	defer srv.Close()
	url := "http://" + l.Addr().String() + "/"
	var d []time.Duration
	n := env.Iterations(2000)
	for i := range n + n/10 {
		start := time.Now()
		resp, err := http.Get(url)
		if err != nil {
			return nil, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if i >= n/10 {
			d = append(d, time.Since(start))
		}
	}
	return []benchkit.Row{{Metric: "empty loopback HTTP round trip (floor) p50 / p99",
		Value: benchkit.Ms(benchkit.Percentile(d, 50)) + " / " + benchkit.Ms(benchkit.Percentile(d, 99))}}, nil
}

// measureMemoryAfterActions measures RSS after many actions against RSS at idle.
func measureMemoryAfterActions(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	s, err := benchkit.StartServer(ctx, env)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	// A few actions of each kind first: the code and buffers they touch
	// the first time are not memory the actions keep.
	for i := range 20 {
		cmd := "true"
		if i%10 == 0 {
			cmd = "seq 1 2000"
		}
		if _, err := s.Client.Run(ctx, cmd, client.RunOptions{Timeout: 10 * time.Second}); err != nil {
			return nil, err
		}
	}
	time.Sleep(2 * time.Second)
	idle, err := benchkit.RSS(s.Cmd.Process.Pid, false)
	if err != nil {
		return nil, err
	}
	n := env.Iterations(10000)
	for i := range n {
		cmd := "true"
		if i%10 == 0 {
			cmd = "seq 1 2000" // some output too
		}
		if _, err := s.Client.Run(ctx, cmd, client.RunOptions{Timeout: 10 * time.Second}); err != nil {
			return nil, err
		}
	}
	time.Sleep(2 * time.Second) // let the runtime return freed memory
	after, err := benchkit.RSS(s.Cmd.Process.Pid, false)
	if err != nil {
		return nil, err
	}
	return []benchkit.Row{{Metric: fmt.Sprintf("RSS after %d actions (idle after 20 actions %s)", n, benchkit.MB(idle)), Value: benchkit.MB(after),
		Floor: benchkit.MB(idle), Ratio: benchkit.Ratio(float64(after), float64(idle)), Target: "≤ idle + 5 MB",
		OK: benchkit.Check(after-idle <= 5<<20)}}, nil
}

// ptySeq times `seq 1 1000000` read from a bare bash on a PTY: the floor
// of every row that follows terminal output.
func ptySeq() (time.Duration, error) {
	start := time.Now()
	c := exec.Command("bash", "--norc", "--noprofile", "-c", "seq 1 1000000")
	f, err := pty.Start(c)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, f) // ends with EIO when seq exits
	c.Wait()
	f.Close()
	return time.Since(start), nil
}

// measureBigOutput measures `seq 1 1000000` through a run action against reading
// the same output from a bare bash on a PTY. Each repetition runs the floor
// and the action in turn, so a drift of the machine's speed moves both.
func measureBigOutput(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	reps := min(env.Iterations(5), 5)
	s, err := benchkit.StartServer(ctx, env)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	var floor, ours []time.Duration
	for range reps {
		d, err := ptySeq()
		if err != nil {
			return nil, err
		}
		floor = append(floor, d)
		start := time.Now()
		obs, err := s.Client.Run(ctx, "seq 1 1000000", client.RunOptions{Timeout: time.Minute})
		if err != nil {
			return nil, err
		}
		if obs.Metadata.ExitCode != 0 {
			return nil, fmt.Errorf("seq exited %d", obs.Metadata.ExitCode)
		}
		ours = append(ours, time.Since(start))
	}
	f50, o50 := benchkit.Percentile(floor, 50), benchkit.Percentile(ours, 50)
	return []benchkit.Row{{Metric: "`seq 1 1000000` via run (median)", Value: benchkit.Ms(o50), Floor: benchkit.Ms(f50),
		Ratio: benchkit.Ratio(float64(o50), float64(f50)), Target: "≤ 1.2× floor", OK: benchkit.Check(float64(o50) <= 1.2*float64(f50))}}, nil
}

// measureParallelSessions runs 20 commands in each of 64 sessions at once and
// compares the wall time with one session running its 20.
func measureParallelSessions(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	s, err := benchkit.StartServer(ctx, env)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	const sessions, commands = 64, 20
	ids := make([]string, sessions)
	for i := range ids {
		sess, err := s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: fmt.Sprintf("b%d", i)})
		if err != nil {
			return nil, err
		}
		ids[i] = sess.ID
	}
	runAll := func(session, command string) error {
		for range commands {
			cmd, err := s.Client.StartCommand(ctx, session, command)
			if err != nil {
				return err
			}
			for {
				ch, err := s.Client.Output(ctx, session, cmd.ID, 1<<40, 10*time.Second)
				if err != nil {
					return err
				}
				if ch.Done {
					break
				}
			}
		}
		return nil
	}
	var rows []benchkit.Row
	for _, command := range []string{"sleep 0.05", "true"} {
		start := time.Now()
		if err := runAll(ids[0], command); err != nil {
			return nil, err
		}
		one := time.Since(start)
		start = time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, sessions)
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := runAll(id, command); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return nil, err
		}
		all := time.Since(start)
		row := benchkit.Row{Metric: fmt.Sprintf("64 sessions × 20 × `%s`, wall time", command), Value: benchkit.Ms(all), Floor: benchkit.Ms(one) + " (1 session)",
			Ratio: benchkit.Ratio(float64(all), float64(one))}
		if command == "sleep 0.05" {
			row.Target, row.OK = "≤ 2× one session", benchkit.Check(all <= 2*one)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// measureAliveUnderFlood measures /alive while another session floods output.
func measureAliveUnderFlood(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	s, err := benchkit.StartServer(ctx, env)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	if _, err := s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: "flood"}); err != nil {
		return nil, err
	}
	cmd, err := s.Client.StartCommand(ctx, "flood", "yes 'flooding the terminal with output' | head -c 300000000")
	if err != nil {
		return nil, err
	}
	time.Sleep(200 * time.Millisecond)
	var d []time.Duration
	for range env.Iterations(2000) {
		start := time.Now()
		if err := s.Client.Alive(ctx); err != nil {
			return nil, err
		}
		d = append(d, time.Since(start))
	}
	st, err := s.Client.Command(ctx, "flood", cmd.ID)
	if err != nil {
		return nil, err
	}
	note := ""
	if !st.Running {
		note = " (flood ended early)"
	}
	_ = s.Client.Signal(ctx, "flood", "SIGKILL")
	p99 := benchkit.Percentile(d, 99)
	return []benchkit.Row{{Metric: "/alive p50 / p99 while a session floods output" + note,
		Value: benchkit.Ms(benchkit.Percentile(d, 50)) + " / " + benchkit.Ms(p99), Target: "p99 ≤ 5 ms", OK: benchkit.Check(p99 <= 5*time.Millisecond)}}, nil
}
