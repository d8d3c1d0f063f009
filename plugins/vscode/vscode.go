package vscode

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/internal/freeport"
	"github.com/actionserver/actionserver/internal/procgroup"
	"github.com/actionserver/actionserver/plugins"
)

// Name is the plugin's name on --plugins.
const Name = "vscode"

// Supervision timings.
const (
	stopGrace   = procgroup.Grace // SIGTERM to SIGKILL on Stop
	minBackoff  = 500 * time.Millisecond
	maxBackoff  = 30 * time.Second
	stableAfter = time.Minute      // a run this long resets the backoff
	restartWait = 60 * time.Second // a restarted server must answer within this
)

// Options configure the plugin beyond what the environment says.
type Options struct {
	// Host is the address the VS Code server listens on; empty means
	// 127.0.0.1. A host reaching it through a published container port
	// needs "0.0.0.0", which is what upstream uses.
	Host string
}

// Plugin runs a VS Code server. Make it with New or NewPlugin.
type Plugin struct {
	host string
	// candidates are the servers looked for, in order.
	candidates []string

	mu      sync.Mutex
	status  plugins.Status
	token   *string
	started bool
	stopped bool
	cur     *proc         // the running server, if any
	quit    chan struct{} // closed by Stop
	done    chan struct{} // closed when supervision ends; nil until it starts
	log     *slog.Logger
}

// New returns the plugin, not started, listening on 127.0.0.1; it is the
// plugins.Factory to register under Name.
func New() plugins.Plugin { return NewPlugin(Options{}) }

// NewPlugin returns the plugin, not started.
func NewPlugin(o Options) *Plugin {
	host := o.Host
	if host == "" {
		host = "127.0.0.1"
	}
	return &Plugin{
		host:       host,
		candidates: []string{OpenVSCodeServer, CodeServerMain},
		status:     plugins.Status{Name: Name, State: plugins.StateStarting},
		quit:       make(chan struct{}),
		log:        slog.Default(),
	}
}

// Name implements plugins.Plugin.
func (p *Plugin) Name() string { return Name }

// Status implements plugins.Plugin.
func (p *Plugin) Status() plugins.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// Token is the connection token for GET /vscode/connection_token: nil
// when VS Code was skipped here, otherwise a fresh UUID per start. It is
// not nil when the port turned out to be busy, as upstream.
func (p *Plugin) Token() *string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.token == nil {
		return nil
	}
	t := *p.token
	return &t
}

func (p *Plugin) setState(st plugins.State, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status.State, p.status.Error = st, msg
}

// disable reports why VS Code does not run here; the server starts anyway.
func (p *Plugin) disable(reason string) error {
	p.log.Warn("VS Code disabled", "reason", reason)
	p.setState(plugins.StateDisabled, reason)
	return nil
}

// Start implements plugins.Plugin: it launches the server as the sandbox
// user and returns once its port answers HTTP, or reports the plugin
// disabled when VS Code cannot run here.
func (p *Plugin) Start(ctx context.Context, env plugins.Env) error {
	p.mu.Lock()
	if p.started || p.stopped {
		p.mu.Unlock()
		return errors.New("vscode plugin: Start called twice or after Stop")
	}
	p.started = true
	if env.Logger != nil {
		p.log = env.Logger
	}
	p.mu.Unlock()

	vars := lookup(env.Environ)
	username := env.Username
	if username == "" {
		username = currentUser()
	}
	if !userAllowed(username, vars) {
		return p.disable(fmt.Sprintf("VS Code runs only as root, openhands or $RUNTIME_USERNAME, not %s", username))
	}
	var cred credential
	if env.Credential != nil {
		cred = credential{uid: int(env.Credential.Uid), gid: int(env.Credential.Gid), set: true}
	}
	settingsDir := firstOf(vars.get("WORKSPACE_BASE"), env.WorkDir, "/workspace")
	path, err := writeSettings(settingsDir, cred)
	if err != nil {
		p.setState(plugins.StateFailed, err.Error())
		return err
	}
	p.log.Debug("VS Code settings", "path", path)
	port, err := parsePort(vars)
	if err != nil {
		return p.disable(err.Error())
	}
	p.mu.Lock()
	p.status.Port = port
	p.mu.Unlock()
	srv, err := findServer(vars, p.candidates)
	if err != nil {
		return p.disable(err.Error())
	}
	token := newToken()
	p.mu.Lock()
	p.token = &token
	p.mu.Unlock()
	if err := freeport.Check(p.host, port); err != nil {
		return p.disable(err.Error())
	}

	home := homeOf(env)
	if srv.node == "" && srv.path == OpenVSCodeServer {
		// Upstream gives openvscode-server's install to the user, who
		// may then update it and add extensions beside it.
		chownTree(filepath.Dir(filepath.Dir(srv.path)), cred, p.log)
	}
	s := spec{
		argv:    srv.argv(p.host, port, token, basePath(vars), filepath.Join(home, ".vscode-server")),
		dir:     firstOf(vars.get("WORKSPACE_MOUNT_PATH_IN_SANDBOX"), env.WorkDir, "/workspace"),
		environ: childEnv(env.Environ, home, username),
		cred:    env.Credential,
		probe:   probeURL(p.host, port),
	}
	pr, err := p.launch(s)
	if err == nil {
		err = waitReady(ctx, p.quit, pr, s.probe)
		if err != nil {
			_ = pr.terminate(context.WithoutCancel(ctx), 0)
		}
	}
	if err != nil {
		p.setState(plugins.StateFailed, err.Error())
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return errStopped
	}
	p.status.State, p.status.Error = plugins.StateReady, ""
	p.done = make(chan struct{})
	go p.supervise(pr, s, p.done)
	p.log.Info("VS Code ready", "port", port, "pid", pr.Pid(), "server", srv.path)
	return nil
}

// launch starts a run of the server unless Stop came first; under the
// lock, so that Stop always sees the run it must end.
func (p *Plugin) launch(s spec) (*proc, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil, errStopped
	}
	pr, err := start(s)
	if err != nil {
		return nil, err
	}
	p.cur = pr
	return pr, nil
}

// supervise restarts the server, with backoff, each time it exits on its
// own, until Stop.
func (p *Plugin) supervise(pr *proc, s spec, done chan struct{}) {
	defer close(done)
	backoff := procgroup.Backoff{Min: minBackoff, Max: maxBackoff, StableAfter: stableAfter}
	for {
		select {
		case <-p.quit:
			return
		case <-pr.Exited():
		}
		_ = pr.Signal(syscall.SIGKILL) // helpers it left behind
		p.mu.Lock()
		if p.cur == pr {
			p.cur = nil // Stop must not signal a group id that may be reused
		}
		p.mu.Unlock()
		delay := backoff.Next(time.Since(pr.Started()))
		reason := "VS Code server " + pr.why() + "; restarting"
		p.log.Warn("VS Code server died", "pid", pr.Pid(), "error", pr.why())
		p.setState(plugins.StateRestarting, reason)
		for {
			select {
			case <-p.quit:
				return
			case <-time.After(delay):
			}
			next, err := p.launch(s)
			if errors.Is(err, errStopped) {
				return
			}
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), restartWait)
				err = waitReady(ctx, p.quit, next, s.probe)
				cancel()
				if errors.Is(err, errStopped) {
					return // Stop ends next itself
				}
				if err == nil {
					pr = next
					p.setState(plugins.StateReady, "")
					p.log.Info("VS Code restarted", "pid", pr.Pid())
					break
				}
				_ = next.terminate(context.Background(), 0)
			}
			p.log.Warn("VS Code restart failed", "error", err)
			p.setState(plugins.StateRestarting, fmt.Sprintf("%s; restart failed: %v", reason, err))
			delay = backoff.Next(0)
		}
	}
}

// Stop implements plugins.Plugin: it ends the server's process group
// (SIGTERM, SIGKILL after a grace period or when ctx ends) and waits for
// it and for supervision to end.
func (p *Plugin) Stop(ctx context.Context) error {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil
	}
	p.stopped = true
	close(p.quit)
	pr, done := p.cur, p.done
	p.mu.Unlock()

	var err error
	if pr != nil {
		err = pr.terminate(ctx, stopGrace)
	}
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			err = errors.Join(err, fmt.Errorf("vscode supervision did not end: %w", ctx.Err()))
		}
	}
	return err
}

// childEnv is the server's environment: the plugin environment with the
// sandbox user's identity and home, as a login as that user would set.
func childEnv(base []string, home, username string) []string {
	if base == nil {
		base = os.Environ()
	}
	set := map[string]string{"HOME": home, "USER": username, "LOGNAME": username}
	out := slices.DeleteFunc(slices.Clone(base), func(kv string) bool {
		for k := range set {
			if len(kv) > len(k) && kv[:len(k)] == k && kv[len(k)] == '=' {
				return true
			}
		}
		return false
	})
	for _, k := range []string{"HOME", "USER", "LOGNAME"} {
		if set[k] != "" {
			out = append(out, k+"="+set[k])
		}
	}
	return out
}

// chownTree gives dir to the sandbox user, as upstream does before it
// starts openvscode-server; failures are logged, the server may still run.
func chownTree(dir string, cred credential, log *slog.Logger) {
	if !cred.set || os.Geteuid() != 0 {
		return
	}
	err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, cred.uid, cred.gid)
	})
	if err != nil {
		log.Warn("give openvscode-server to the sandbox user", "error", err)
	}
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
