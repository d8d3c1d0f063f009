package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
)

// SwerexPeerPythonEnv names the Python of the environment holding swe-rex,
// whose own swerex-remote is measured beside ours; by default the compat
// suite's.
const SwerexPeerPythonEnv = "SWEREX_PEER_PYTHON"

const defaultSwerexPython = "compat/swerex/.venv/1.4.0/bin/python"

const swerexToken = "bench-token"

// swerexResult is what is measured on one swerex-remote.
type swerexResult struct {
	run, exec, alive []time.Duration
}

// measureSwerexPeer measures SWE-ReX's API on ours (the binary started as
// swerex-remote) and on swe-rex 1.4.0's own server from the same
// environment the compat suite uses, in the same run, over the same
// client: a fresh connection per request, as swe-rex's client makes.
func measureSwerexPeer(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	python := os.Getenv(SwerexPeerPythonEnv)
	if python == "" {
		python = defaultSwerexPython
	}
	upstream := filepath.Join(filepath.Dir(python), "swerex-remote")
	if _, err := os.Stat(upstream); err != nil {
		env.Logf("  swe-rex peer skipped: no %s (run compat/swerex/setup.sh, or set %s)", upstream, SwerexPeerPythonEnv)
		return []benchkit.Row{{Metric: "swe-rex peer", Value: "not measured: no swe-rex environment (compat/swerex/setup.sh)"}}, nil
	}
	upstream, err := filepath.Abs(upstream)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "bench-swerex-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	link := filepath.Join(dir, "swerex-remote")
	if err := os.Symlink(filepath.Join(env.BinDir, "action-server"), link); err != nil {
		return nil, err
	}
	n := env.Iterations(200)
	ours, err := measureSwerex(ctx, env, link, n)
	if err != nil {
		return nil, fmt.Errorf("ours: %w", err)
	}
	theirs, err := measureSwerex(ctx, env, upstream, n)
	if err != nil {
		return nil, fmt.Errorf("swe-rex: %w", err)
	}
	row := func(metric string, a, b []time.Duration, p float64, target time.Duration) benchkit.Row {
		va, vb := benchkit.Percentile(a, p), benchkit.Percentile(b, p)
		r := benchkit.Row{Metric: metric, Value: benchkit.Ms(va), Floor: benchkit.Ms(vb) + " swe-rex", Ratio: benchkit.Ratio(float64(vb), float64(va))}
		if target > 0 {
			r.Target = "< " + benchkit.Ms(target)
			r.OK = benchkit.Check(va < target)
		}
		return r
	}
	return []benchkit.Row{
		row("swe-rex: run_in_session('true') p50 (swe-rex vs ours)", ours.run, theirs.run, 50, 0),
		row("swe-rex: run_in_session('true') p99", ours.run, theirs.run, 99, 0),
		row("swe-rex: /execute 'true' p50", ours.exec, theirs.exec, 50, 0),
		row("swe-rex: /execute 'true' p99", ours.exec, theirs.exec, 99, 0),
		row("swe-rex: /is_alive, slowest of 5, while a command runs", ours.alive, theirs.alive, 100, 150*time.Millisecond),
	}, nil
}

// measureSwerex starts one server and measures it.
func measureSwerex(ctx context.Context, env *benchkit.Env, program string, n int) (*swerexResult, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ws, err := os.MkdirTemp("", "bench-swerex-ws-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(ws)
	cmd := exec.CommandContext(ctx, program, "--auth-token", swerexToken, "--host", "127.0.0.1", "--port", strconv.Itoa(port))
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "HOME="+env.Home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	c := &swerexClient{base: fmt.Sprintf("http://127.0.0.1:%d", port),
		http: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := c.call(http.MethodGet, "/is_alive", nil); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, errors.New("not alive after 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, s := range []string{"default", "busy"} {
		if _, err := c.call(http.MethodPost, "/create_session", map[string]any{"session": s, "session_type": "bash", "startup_timeout": 10.0}); err != nil {
			return nil, fmt.Errorf("create_session: %w", err)
		}
	}
	r := &swerexResult{}
	for i := 0; i < n; i++ {
		d, err := c.call(http.MethodPost, "/run_in_session", map[string]any{"session": "default", "command": "true", "action_type": "bash"})
		if err != nil {
			return nil, fmt.Errorf("run_in_session: %w", err)
		}
		r.run = append(r.run, d)
	}
	for i := 0; i < n; i++ {
		d, err := c.call(http.MethodPost, "/execute", map[string]any{"command": "true", "shell": true})
		if err != nil {
			return nil, fmt.Errorf("execute: %w", err)
		}
		r.exec = append(r.exec, d)
	}
	// /is_alive while another session runs a command for a while.
	var wg sync.WaitGroup
	wg.Add(1)
	var busyErr error
	go func() {
		defer wg.Done()
		_, busyErr = c.call(http.MethodPost, "/run_in_session", map[string]any{"session": "busy", "command": "sleep 2", "action_type": "bash"})
	}()
	time.Sleep(200 * time.Millisecond) // the command has started
	// Asked one after another: a server that queues the check behind the
	// command answers the first when the command ends.
	for i := 0; i < 5; i++ {
		d, err := c.call(http.MethodGet, "/is_alive", nil)
		if err != nil {
			return nil, fmt.Errorf("is_alive: %w", err)
		}
		r.alive = append(r.alive, d)
	}
	wg.Wait()
	if busyErr != nil {
		return nil, fmt.Errorf("run_in_session sleep: %w", busyErr)
	}
	return r, nil
}

// swerexClient makes one request per connection, as swe-rex's does.
type swerexClient struct {
	base string
	http *http.Client
}

// call makes a request and returns how long it took; a reply other than
// 200 is an error.
func (c *swerexClient) call(method, path string, body any) (time.Duration, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-API-Key", swerexToken)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %d %s", path, resp.StatusCode, data)
	}
	return d, nil
}
