package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
	"github.com/actionserver/actionserver/client"
)

// PeerPythonEnv names the Python of the environment holding the upstream
// OpenHands server (openhands-ai); by default the compat suite's.
const PeerPythonEnv = "OPENHANDS_PEER_PYTHON"

// defaultPeerPython is where compat/openhands/setup.sh puts the pinned
// release the wire contract was written from.
const defaultPeerPython = "compat/openhands/.venv/0.62.0/bin/python"

// peerModule is the upstream server, run from the same environment the
// compat suite's host comes from.
const peerModule = "openhands.runtime.action_execution_server"

// peerWrapper runs the upstream server's module as its own main, with
// uvicorn's listen address pinned to loopback: upstream hard-codes
// 0.0.0.0, and benchmarks bind loopback only. Nothing else changes.
const peerWrapper = `import runpy, sys, uvicorn
_run = uvicorn.run
uvicorn.run = lambda *a, **k: _run(*a, **{**k, "host": "127.0.0.1"})
sys.argv = [sys.argv[0]] + sys.argv[1:]
runpy.run_module("` + peerModule + `", run_name="__main__", alter_sys=True)
`

// Peer is a server under comparison: ours or upstream's, started with the
// command line OpenHands' DockerRuntime builds.
type Peer struct {
	Name   string
	URL    string
	Cmd    *exec.Cmd
	Client *client.Client
	Ready  time.Duration
	ws     string
	// adopted are processes that left the server's tree (tmux daemonises)
	// and were re-parented to this process, the subreaper.
	adopted []int
	before  map[int]bool
	exited  chan struct{}
}

// peerArgs is the part of DockerRuntime's command line after the module
// name: no plugins, browser off, the current user.
func peerArgs(port int, ws string) []string {
	uid := os.Getuid()
	name := "root"
	if out, err := exec.Command("id", "-un").Output(); err == nil {
		name = strings.TrimSpace(string(out))
	}
	return []string{strconv.Itoa(port), "--working-dir", ws, "--username", name,
		"--user-id", strconv.Itoa(uid), "--no-enable-browser"}
}

// startPeer starts ours (python == "") through the launcher name, or the
// upstream server with python, and waits until /alive answers 200.
func startPeer(ctx context.Context, env *benchkit.Env, python string) (*Peer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ws, err := os.MkdirTemp("", "bench-peer-ws-")
	if err != nil {
		return nil, err
	}
	p := &Peer{URL: fmt.Sprintf("http://127.0.0.1:%d", port), ws: ws, before: childrenOf(os.Getpid())}
	scratch := filepath.Join(env.Home, "peer")
	var cmd *exec.Cmd
	if python == "" {
		p.Name = "action-server"
		launcher := filepath.Join(scratch, "micromamba", "bin", "micromamba")
		if err := os.MkdirAll(filepath.Dir(launcher), 0o755); err != nil {
			return nil, err
		}
		if _, err := os.Lstat(launcher); err != nil {
			if err := os.Symlink(filepath.Join(env.BinDir, "action-server"), launcher); err != nil {
				return nil, err
			}
		}
		args := append([]string{"run", "-n", "openhands", "poetry", "run", "python", "-u", "-m", peerModule},
			peerArgs(port, ws)...)
		cmd = exec.Command(launcher, append(args, "--host", "127.0.0.1")...)
	} else {
		p.Name = "upstream"
		cmd = exec.Command(python, append([]string{"-u", "-c", peerWrapper}, peerArgs(port, ws)...)...)
	}
	tmux := filepath.Join(scratch, "tmux")
	if err := os.MkdirAll(tmux, 0o700); err != nil {
		return nil, err
	}
	// Its own tmux socket directory, so upstream's shell never joins a
	// tmux server someone else runs on this machine.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + env.Home, "LANG=C.UTF-8", "LOG_LEVEL=warn",
		"TMUX_TMPDIR=" + tmux, "FILE_VIEWER_URL_FILE=" + filepath.Join(scratch, "oh-server-url")}
	cmd.Dir = scratch
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.Cmd = cmd
	p.Client = client.New(p.URL)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	p.exited = exited
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(5 * time.Minute) // upstream imports for a long time on a busy machine
	for {
		actx, cancel := context.WithTimeout(ctx, time.Second)
		err := p.Client.Alive(actx)
		cancel()
		if err == nil {
			p.Ready = time.Since(start)
			return p, nil
		}
		select {
		case <-exited:
			p.cleanup()
			return nil, fmt.Errorf("%s exited before it was ready", p.Name)
		default:
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("%s not ready after 5 minutes: %w", p.Name, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// Stop ends the server, its process group and what it left behind.
func (p *Peer) Stop() {
	p.adopt()
	_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(6 * time.Second):
	}
	_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
	p.cleanup()
}

func (p *Peer) cleanup() {
	// Twice: a process may be re-parented here while the first ones end.
	for range 2 {
		p.adopt()
		for _, pid := range p.adopted {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, 0, nil)
		}
		time.Sleep(100 * time.Millisecond)
	}
	os.RemoveAll(p.ws)
}

// adopt records the processes re-parented to this one since the start.
func (p *Peer) adopt() {
	for pid := range childrenOf(os.Getpid()) {
		if !p.before[pid] && pid != p.Cmd.Process.Pid && !containsPID(p.adopted, pid) {
			p.adopted = append(p.adopted, pid)
		}
	}
}

func containsPID(s []int, pid int) bool {
	for _, v := range s {
		if v == pid {
			return true
		}
	}
	return false
}

// TreeRSS is the resident memory of the server, its descendants and what
// it left to this process (tmux's server daemonises).
func (p *Peer) TreeRSS() (int64, error) {
	p.adopt()
	roots := append([]int{p.Cmd.Process.Pid}, p.adopted...)
	var total int64
	seen := map[int]bool{}
	for len(roots) > 0 {
		pid := roots[0]
		roots = roots[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		r, err := benchkit.RSS(pid, false)
		if err != nil {
			continue // gone meanwhile
		}
		total += r
		for c := range childrenOf(pid) {
			roots = append(roots, c)
		}
	}
	if total == 0 {
		return 0, errors.New("no process found")
	}
	return total, nil
}

// childrenOf lists the live children of pid from /proc.
func childrenOf(pid int) map[int]bool {
	out := map[int]bool{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name may hold spaces and parentheses: fields
		// start after the last ')'.
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 {
			if ppid, err := strconv.Atoi(f[1]); err == nil && ppid == pid {
				out[child] = true
			}
		}
	}
	return out
}

// becomeSubreaper makes orphaned descendants re-parent to this process, so
// a daemonising child (tmux) stays countable and can be ended.
func becomeSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return errno
	}
	return nil
}
