// Package benchkit is what the benchmark commands share: a server started
// for a measurement, the environment of a run, the rows of the results
// table and the helpers that format them. The benchmarks measure the action
// server against the cheapest way to do the same work on the same machine
// (the floor), in the same run: bench/cmd/report writes RESULTS.md,
// bench/cmd/soak drives a server for a while and looks for leaks.
package benchkit

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/client"
)

// Row is one line of the results table.
type Row struct {
	Metric string
	Value  string // this server
	Floor  string // the cheapest way to do the same on this machine
	Ratio  string // Value / Floor
	Target string
	OK     *bool // whether Value meets Target; nil when there is no target
}

// Env is what scenarios share.
type Env struct {
	// BinDir holds action-server and actionctl built for this run.
	BinDir string
	// Home is a clean HOME, so no ~/.bashrc initialisation is measured.
	Home string
	// Quick shortens scenarios (fewer iterations) for CI smoke runs.
	Quick bool
	Logf  func(format string, args ...any)
}

// Iterations returns n, or a tenth of it in quick mode.
func (e *Env) Iterations(n int) int {
	if e.Quick {
		return max(n/10, 20)
	}
	return n
}

// Percentile returns the p-th percentile (0–100) of d.
func Percentile[T ~int64 | ~float64](d []T, p float64) T {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

// Ms formats a duration in milliseconds.
func Ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }

// Ratio formats a/b.
func Ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// Check records whether a target is met.
func Check(ok bool) *bool { return &ok }

// Server is an action-server process started for a scenario.
type Server struct {
	URL     string
	Cmd     *exec.Cmd
	Client  *client.Client
	Ready   time.Duration // from exec to the first 200 from /alive
	WorkDir string        // its workspace, removed by Stop
}

// StartServer runs the binary on a free loopback port in a fresh workspace
// as the current user, without the browser, and waits until /alive is 200.
func StartServer(ctx context.Context, env *Env, extraArgs ...string) (*Server, error) {
	return StartBinary(ctx, env, "action-server", extraArgs...)
}

// StartBinary is StartServer for another binary of env.BinDir that takes
// action-server's command line, such as a floor.
func StartBinary(ctx context.Context, env *Env, name string, extraArgs ...string) (*Server, error) {
	return StartBinaryEnv(ctx, env, name, nil, extraArgs...)
}

// StartBinaryEnv is StartBinary with extraEnv added to the server's
// environment.
func StartBinaryEnv(ctx context.Context, env *Env, name string, extraEnv []string, extraArgs ...string) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ws, err := os.MkdirTemp("", "bench-ws-")
	if err != nil {
		return nil, err
	}
	args := append([]string{strconv.Itoa(port), "--host", "127.0.0.1", "--working-dir", ws, "--no-enable-browser"}, extraArgs...)
	cmd := exec.Command(filepath.Join(env.BinDir, name), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + env.Home, "LANG=C.UTF-8", "LOG_LEVEL=warn"}, extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Cmd: cmd, WorkDir: ws}
	s.Client = client.New(s.URL)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(ws)
		return nil, err
	}
	// Poll tightly: this measures readiness, so the poll must not add much.
	deadline := time.Now().Add(30 * time.Second)
	for {
		actx, cancel := context.WithTimeout(ctx, time.Second)
		err := s.Client.Alive(actx)
		cancel()
		if err == nil {
			s.Ready = time.Since(start)
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("server not ready after 30 s: %w", err)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// Stop ends the server and its process group, and removes its workspace.
func (s *Server) Stop() {
	defer os.RemoveAll(s.WorkDir)
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(6 * time.Second):
		_ = syscall.Kill(-s.Cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// RSS returns a process's resident set size in bytes (VmRSS), or its peak
// (VmHWM) when peak is true.
func RSS(pid int, peak bool) (int64, error) {
	if peak {
		return statusBytes(pid, "VmHWM:")
	}
	return statusBytes(pid, "VmRSS:")
}

// FileRSS returns the part of a process's resident set that maps files
// (RssFile): for a static binary, mostly the binary's own code and data.
func FileRSS(pid int) (int64, error) { return statusBytes(pid, "RssFile:") }

// statusBytes reads a field of /proc/PID/status given in kB.
func statusBytes(pid int, key string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", key, pid)
}

// MB formats bytes in mebibytes.
func MB(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }
