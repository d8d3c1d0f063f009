package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/actionserver/actionserver/internal/procgroup"
)

// Server states reported by Status.
const (
	StateStarting   = "starting"
	StateRunning    = "running"
	StateRestarting = "restarting" // died or failed to start; waiting to try again
	StateStopped    = "stopped"
)

// ServerStatus is one stdio server as /server_info shows it.
type ServerStatus struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	State   string `json:"state"`
	// PID of the running process (0 when none).
	PID int `json:"pid,omitempty"`
	// Tools is how many tools it offers.
	Tools int `json:"tools"`
	// Calls is how many forwarded calls are in flight.
	Calls int `json:"calls"`
	// Restarts counts the starts after the first.
	Restarts int `json:"restarts"`
	// Error is why the last start failed or the last run ended.
	Error string `json:"error,omitempty"`
}

// stdioServer supervises one stdio MCP server: it starts the process,
// connects the SDK client to it, restarts it with backoff when it dies, and
// keeps the tools and prompts it last listed.
type stdioServer struct {
	cfg     ServerConfig
	m       *Manager
	log     *slog.Logger
	stderr  *stderrLog
	cancel  context.CancelFunc
	calls   atomic.Int32  // forwarded calls in flight
	done    chan struct{} // closed when run returns
	started chan struct{} // closed after the first start attempt

	mu        sync.Mutex
	state     string
	err       string
	restarts  int
	session   *sdk.ClientSession
	cmd       *exec.Cmd
	tools     []*sdk.Tool
	prompts   []*sdk.Prompt
	resources []*sdk.Resource
}

// startStdioServer starts supervising a server in the background.
func startStdioServer(m *Manager, cfg ServerConfig) *stdioServer {
	log := m.log.With("mcp_server", cfg.Name)
	ctx, cancel := context.WithCancel(context.Background())
	s := &stdioServer{cfg: cfg, m: m, log: log, stderr: newStderrLog(log), cancel: cancel,
		done: make(chan struct{}), started: make(chan struct{}), state: StateStarting}
	go s.run(ctx)
	return s
}

func (s *stdioServer) run(ctx context.Context) {
	defer close(s.done)
	// A run that stayed up as long as the longest delay was healthy.
	backoff := procgroup.Backoff{Min: s.m.opts.RestartMin, Max: s.m.opts.RestartMax, StableAfter: s.m.opts.RestartMax}
	first := true
	for {
		began := time.Now()
		session, err := s.connect(ctx)
		if err == nil {
			s.m.publish()
		} else {
			s.setFailed(err)
		}
		if first {
			// Update returns once this is closed: its tools must be offered.
			close(s.started)
			first = false
		}
		if err == nil {
			err = session.Wait()
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				err = errors.New("exited")
			}
			err = fmt.Errorf("server ended: %w%s", err, s.stderr.tail())
			s.log.Warn("MCP server ended; restarting", "error", err)
			s.endProcess(ctx)
		} else if ctx.Err() != nil {
			return
		} else {
			s.log.Warn("MCP server failed to start", "error", err)
		}
		s.setFailed(err)
		t := time.NewTimer(backoff.Next(time.Since(began)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		s.mu.Lock()
		s.restarts++
		s.mu.Unlock()
	}
}

// setFailed records why the server is not running, before anyone waiting
// for the start looks.
func (s *stdioServer) setFailed(err error) {
	s.mu.Lock()
	s.state, s.err, s.session = StateRestarting, err.Error(), nil
	s.mu.Unlock()
}

// connect starts the process and completes the MCP handshake and the first
// listing within the start timeout.
func (s *stdioServer) connect(ctx context.Context) (*sdk.ClientSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // stopped before it started
	}
	cmd, err := s.command()
	if err != nil {
		return nil, err
	}
	s.stderr.reset()
	cctx, cancel := context.WithTimeout(ctx, s.m.opts.StartTimeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "action-server-mcp-proxy", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { s.relist() },
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { s.relist() },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { s.relist() },
	})
	// The transport closes stdin and waits for the process when the session
	// ends; the group is ended by endProcess, so a short wait is enough.
	transport := &sdk.CommandTransport{Command: cmd, TerminateDuration: 500 * time.Millisecond}
	session, err := client.Connect(cctx, transport, nil)
	if cmd.Process != nil {
		s.mu.Lock()
		s.cmd = cmd
		s.mu.Unlock()
	}
	if err != nil {
		s.endProcess(ctx)
		return nil, fmt.Errorf("start %s: %w%s", s.cfg.Command, err, s.stderr.tail())
	}
	l, err := list(cctx, session)
	if err != nil {
		session.Close()
		s.endProcess(ctx)
		return nil, fmt.Errorf("list tools of %s: %w%s", s.cfg.Name, err, s.stderr.tail())
	}
	s.mu.Lock()
	s.session, s.tools, s.prompts, s.resources = session, l.tools, l.prompts, l.resources
	s.state, s.err = StateRunning, ""
	s.mu.Unlock()
	s.log.Info("MCP server running", "pid", cmd.Process.Pid, "tools", len(l.tools))
	return session, nil
}

// listing is what one server offers.
type listing struct {
	tools     []*sdk.Tool
	prompts   []*sdk.Prompt
	resources []*sdk.Resource
}

// list fetches every page of tools, prompts and (static) resources.
func list(ctx context.Context, session *sdk.ClientSession) (listing, error) {
	var l listing
	caps := session.InitializeResult().Capabilities
	if caps == nil || caps.Tools != nil {
		for t, err := range session.Tools(ctx, nil) {
			if err != nil {
				return listing{}, err
			}
			l.tools = append(l.tools, t)
		}
	}
	// Prompts and resources are a courtesy; tools are what matters.
	if caps != nil && caps.Prompts != nil {
		for p, err := range session.Prompts(ctx, nil) {
			if err != nil {
				break
			}
			l.prompts = append(l.prompts, p)
		}
	}
	if caps != nil && caps.Resources != nil {
		for r, err := range session.Resources(ctx, nil) {
			if err != nil || len(l.resources) >= maxResources {
				break
			}
			l.resources = append(l.resources, r)
		}
	}
	return l, nil
}

// maxResources bounds the resources kept per server.
const maxResources = 1000

// relist refreshes the tools after the server said they changed.
func (s *stdioServer) relist() {
	go func() {
		s.mu.Lock()
		session := s.session
		s.mu.Unlock()
		if session == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.m.opts.StartTimeout)
		defer cancel()
		l, err := list(ctx, session)
		if err != nil {
			s.log.Warn("relist MCP server tools", "error", err)
			return
		}
		s.mu.Lock()
		if s.session == session {
			s.tools, s.prompts, s.resources = l.tools, l.prompts, l.resources
		}
		s.mu.Unlock()
		s.m.publish()
	}()
}

// command builds the server's process: the sandbox user, the workspace,
// the sandbox environment plus the server's, a process group of its own.
func (s *stdioServer) command() (*exec.Cmd, error) {
	env := mergeEnv(s.m.opts.Env, s.cfg.Env)
	path, err := lookPath(s.cfg.Command, envValue(env, "PATH"))
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:   path,
		Args:   append([]string{s.cfg.Command}, s.cfg.Args...),
		Env:    env,
		Dir:    s.m.opts.Dir,
		Stderr: s.stderr,
		// A grandchild that keeps stderr open must not stop Wait.
		WaitDelay:   time.Second,
		SysProcAttr: &syscall.SysProcAttr{Credential: s.m.opts.Credential},
	}
	procgroup.Prepare(cmd)
	return cmd, nil
}

// endProcess ends the server's process group: SIGTERM, then SIGKILL once
// the group is still there after the grace period or when ctx ends. The
// SDK reaps the leader when its session closes.
func (s *stdioServer) endProcess(ctx context.Context) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	if err := procgroup.End(ctx, cmd.Process.Pid, nil, s.m.opts.StopGrace); err != nil {
		s.log.Warn("end MCP server", "error", err)
	}
}

// stop ends the supervision loop and the process group, returning when
// both are done or ctx ends.
func (s *stdioServer) stop(ctx context.Context) {
	s.cancel()
	s.mu.Lock()
	session := s.session
	s.session = nil
	s.mu.Unlock()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if session != nil {
			// Closing stdin is the polite way to end a stdio server; the
			// SDK then reaps it.
			go session.Close()
		}
		s.endProcess(ctx)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
	}
	select {
	case <-s.done:
	case <-ctx.Done():
	}
	s.mu.Lock()
	s.state = StateStopped
	s.mu.Unlock()
}

func (s *stdioServer) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{Name: s.cfg.Name, Command: s.cfg.Command, State: s.state,
		Tools: len(s.tools), Calls: int(s.calls.Load()), Restarts: s.restarts, Error: s.err}
	if s.state == StateRunning && s.cmd != nil && s.cmd.Process != nil {
		st.PID = s.cmd.Process.Pid
	}
	return st
}

// current returns the live session, or why there is none.
func (s *stdioServer) current() (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == nil {
		msg := fmt.Sprintf("MCP server %s is not running (%s)", s.cfg.Name, s.state)
		if s.err != "" {
			msg += ": " + s.err
		}
		return nil, errors.New(msg)
	}
	return s.session, nil
}

// mergeEnv returns base with extra set over it.
func mergeEnv(base []string, extra map[string]string) []string {
	env := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := extra[k]; !ok {
			env = append(env, kv)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// lookPath finds command in the server's PATH (the sandbox's, not ours),
// as a shell would.
func lookPath(command, path string) (string, error) {
	if strings.Contains(command, "/") {
		if err := executable(command); err != nil {
			return "", fmt.Errorf("command %q: %w", command, err)
		}
		return command, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, command)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q: executable file not found in $PATH", command)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}
