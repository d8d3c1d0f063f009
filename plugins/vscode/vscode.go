// Package vscode is the "vscode" plugin: a VS Code server in the browser
// (openvscode-server in OpenHands' images, or the server inside the
// code-server package) run as the sandbox user on VSCODE_PORT, guarded by
// a connection token that GET /vscode/connection_token hands the host.
package vscode

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/plugins"
)

// Name is the plugin's name.
const Name = "vscode"

// Where VS Code servers are looked for, after the ServerBinEnv override.
const (
	// OpenVSCodeServer is where OpenHands' images install openvscode-server.
	OpenVSCodeServer = "/openhands/.openvscode-server/bin/openvscode-server"
	// CodeServerPrefix is where scripts/deps.sh installs code-server.
	CodeServerPrefix = "/opt/code-server"
	// ServerBinEnv overrides the server: an openvscode-server executable or
	// a code-server installation directory.
	ServerBinEnv = "VSCODE_SERVER_BIN"
)

// settings are the workspace settings upstream writes.
const settings = `{
  "workbench.colorTheme": "Default Dark Modern",
  "workbench.startupEditor": "none",
  "chat.commandCenter.enabled": false
}
`

// Plugin runs the VS Code server. Create it with New.
type Plugin struct {
	hc *http.Client

	mu        sync.Mutex
	env       plugins.Env
	status    plugins.Status
	token     *string
	argv      []string
	dataDir   string
	cmd       *exec.Cmd
	exited    chan struct{}
	stopping  bool
	superDone chan struct{}
}

// New returns the plugin, not started.
func New() plugins.Plugin {
	return &Plugin{hc: &http.Client{Timeout: 2 * time.Second}, status: plugins.Status{Name: Name, State: plugins.StateStarting}}
}

// Name implements plugins.Plugin.
func (p *Plugin) Name() string { return Name }

// Status implements plugins.Plugin.
func (p *Plugin) Status() plugins.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// Token returns the connection token, or nil when VS Code is not running
// here (disabled).
func (p *Plugin) Token() *string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.status.State == plugins.StateDisabled || p.status.State == plugins.StateFailed {
		return nil
	}
	return p.token
}

func (p *Plugin) disable(reason string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status.State, p.status.Error = plugins.StateDisabled, reason
	p.env.Logger.Warn("vscode disabled", "reason", reason)
	return nil
}

func getenv(environ []string, key string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], key+"="); ok {
			return v
		}
	}
	return os.Getenv(key)
}

// command returns how to run the server found on this machine.
func command(environ []string) ([]string, error) {
	candidates := []string{OpenVSCodeServer, CodeServerPrefix}
	if v := getenv(environ, ServerBinEnv); v != "" {
		candidates = []string{v}
	}
	for _, c := range candidates {
		fi, err := os.Stat(c)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			return []string{c}, nil
		}
		main := filepath.Join(c, "lib", "vscode", "out", "server-main.js")
		if _, err := os.Stat(main); err != nil {
			continue
		}
		node, err := exec.LookPath("node")
		if err != nil {
			return nil, errors.New("node is not installed (code-server needs it)")
		}
		return []string{node, main, "--accept-server-license-terms"}, nil
	}
	return nil, fmt.Errorf("no VS Code server found (looked at %s)", strings.Join(candidates, ", "))
}

// Start launches the server, or reports the plugin disabled (with the
// reason) when it cannot run here; either way the action server starts.
func (p *Plugin) Start(ctx context.Context, env plugins.Env) error {
	p.mu.Lock()
	p.env = env
	p.mu.Unlock()
	allowed := map[string]bool{"root": true, "openhands": true}
	if u := getenv(env.Environ, "RUNTIME_USERNAME"); u != "" {
		allowed[u] = true
	}
	if !allowed[env.Username] {
		return p.disable(fmt.Sprintf("VS Code runs only as root, openhands or $RUNTIME_USERNAME, not %s", env.Username))
	}
	port, err := strconv.Atoi(getenv(env.Environ, "VSCODE_PORT"))
	if err != nil || port <= 0 || port > 65535 {
		return p.disable("VSCODE_PORT is not set to a port number")
	}
	argv, err := command(env.Environ)
	if err != nil {
		return p.disable(err.Error())
	}
	if l, err := net.Listen("tcp", ":"+strconv.Itoa(port)); err != nil {
		return p.disable(fmt.Sprintf("port %d is not free: %v", port, err))
	} else {
		l.Close()
	}
	token := newToken()
	argv = append(argv, "--host", "0.0.0.0", "--port", strconv.Itoa(port), "--connection-token", token,
		"--disable-workspace-trust")
	if base := basePath(getenv(env.Environ, "RUNTIME_URL"), getenv(env.Environ, "RUNTIME_ID")); base != "" {
		argv = append(argv, "--server-base-path", base)
	}
	dataDir, err := os.MkdirTemp("", "vscode-data-")
	if err != nil {
		return err
	}
	if env.Credential != nil {
		os.Chown(dataDir, int(env.Credential.Uid), int(env.Credential.Gid))
	}
	if len(argv) > 1 { // code-server's server takes a data directory
		argv = append(argv, "--server-data-dir", dataDir)
	}
	writeSettings(env)
	p.mu.Lock()
	p.token, p.argv, p.dataDir = &token, argv, dataDir
	p.status.Port = port
	p.mu.Unlock()
	if err := p.launch(ctx); err != nil {
		os.RemoveAll(dataDir)
		p.mu.Lock()
		p.status.State, p.status.Error = plugins.StateFailed, err.Error()
		p.mu.Unlock()
		return err
	}
	p.mu.Lock()
	p.status.State = plugins.StateReady
	p.superDone = make(chan struct{})
	go p.supervise(p.superDone)
	p.mu.Unlock()
	return nil
}

// basePath is the path VS Code is served under when the host reaches the
// sandbox through a path-routed URL (https://host/<runtime id>/...).
func basePath(runtimeURL, runtimeID string) string {
	if runtimeURL == "" || runtimeID == "" {
		return ""
	}
	u, err := url.Parse(runtimeURL)
	if err != nil || !strings.HasPrefix(u.Path, "/"+runtimeID) {
		return ""
	}
	return "/" + runtimeID + "/vscode"
}

// writeSettings gives the workspace upstream's VS Code settings, unless it
// has its own: a user's settings are never overwritten.
func writeSettings(env plugins.Env) {
	dir := filepath.Join(env.WorkDir, ".vscode")
	path := filepath.Join(dir, "settings.json")
	if _, err := os.Stat(path); err == nil {
		return
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		env.Logger.Warn("vscode settings", "error", err)
		return
	}
	if err := os.WriteFile(path, []byte(settings), 0o666); err != nil {
		env.Logger.Warn("vscode settings", "error", err)
		return
	}
	os.Chmod(path, 0o666) // whatever the umask
	if env.Credential != nil {
		os.Chown(dir, int(env.Credential.Uid), int(env.Credential.Gid))
		os.Chown(path, int(env.Credential.Uid), int(env.Credential.Gid))
	}
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// launch starts the server and waits until its port answers HTTP.
func (p *Plugin) launch(ctx context.Context) error {
	p.mu.Lock()
	env, argv, port := p.env, p.argv, p.status.Port
	p.mu.Unlock()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = env.WorkDir
	cmd.Env = env.Environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: env.Credential}
	lw := plugins.LineLogger(env.Logger, "vscode server", nil)
	cmd.Stdout, cmd.Stderr = lw, lw
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", argv[0], err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	probe := "http://127.0.0.1:" + strconv.Itoa(port) + "/"
	for {
		resp, err := p.hc.Get(probe)
		if err == nil {
			resp.Body.Close()
			env.Logger.Info("vscode ready", "port", port, "pid", cmd.Process.Pid)
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("VS Code server exited during start-up (%s)", cmd.ProcessState)
		case <-ctx.Done():
			p.kill()
			return fmt.Errorf("VS Code server not ready: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// supervise restarts the server when it exits on its own, with backoff.
func (p *Plugin) supervise(done chan struct{}) {
	defer close(done)
	delay := 500 * time.Millisecond
	for {
		p.mu.Lock()
		exited := p.exited
		p.mu.Unlock()
		<-exited
		p.mu.Lock()
		if p.stopping {
			p.mu.Unlock()
			return
		}
		p.status.State, p.status.Error = plugins.StateRestarting, "VS Code server exited ("+p.cmd.ProcessState.String()+")"
		p.mu.Unlock()
		p.kill() // its children, if any are left
		time.Sleep(delay)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := p.launch(ctx)
		cancel()
		p.mu.Lock()
		if err != nil {
			p.status.Error = err.Error()
			delay = min(2*delay, 30*time.Second)
		} else {
			p.status.State, p.status.Error = plugins.StateReady, ""
			delay = 500 * time.Millisecond
		}
		stopping := p.stopping
		p.mu.Unlock()
		if stopping {
			return
		}
	}
}

// kill ends the server's whole process group (it forks helpers).
func (p *Plugin) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	plugins.EndGroup(cmd, exited, 3*time.Second)
}

// Stop ends the server.
func (p *Plugin) Stop(context.Context) error {
	p.mu.Lock()
	p.stopping = true
	done, dataDir := p.superDone, p.dataDir
	p.mu.Unlock()
	p.kill()
	if done != nil {
		<-done
	}
	if dataDir != "" {
		os.RemoveAll(dataDir)
	}
	return nil
}
