package vscode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/internal/procgroup"
)

// tailSize bounds the output kept from a server to explain its death.
const tailSize = 4 << 10

// waitDelay bounds how long Wait waits for the server's helpers to close
// its output pipes after the server itself exited.
const waitDelay = time.Second

// spec is everything needed to launch the server again.
type spec struct {
	argv    []string
	dir     string
	environ []string
	cred    *syscall.Credential
	// probe is the URL that answers once the server listens.
	probe string
}

// proc is one run of the server, leading its process group, with the tail
// of its output to explain its death.
type proc struct {
	*procgroup.Group
	out *tail
}

// start runs s in a process group of its own, so that the helpers the
// server forks can be ended with it.
func start(s spec) (*proc, error) {
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Dir = s.dir
	cmd.Env = s.environ
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	out := &tail{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = waitDelay
	g, err := procgroup.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("start VS Code server: %w", err)
	}
	return &proc{Group: g, out: out}, nil
}

// why describes how a server that exited ended, with its last output.
func (p *proc) why() string {
	msg := "exited"
	if err := p.Err(); err != nil {
		msg = err.Error()
	}
	if last := p.out.lastLines(3); last != "" {
		msg += ": " + last
	}
	return msg
}

// terminate ends the group: SIGTERM, then SIGKILL after grace (or when ctx
// ends), and waits for the server. The SIGKILL is sent even after a clean
// exit, for helpers that outlived the server.
func (p *proc) terminate(ctx context.Context, grace time.Duration) error {
	if err := p.Stop(ctx, grace); err != nil {
		return fmt.Errorf("VS Code server: %w", err)
	}
	return nil
}

// errStopped is returned to a start or restart that Stop overtook.
var errStopped = errors.New("vscode plugin stopped")

// pollInterval is how often a starting server's port is tried.
const pollInterval = 100 * time.Millisecond

// waitReady returns once the server answers HTTP on its port, which is
// the moment the host can use it; any status will do, the token check
// answers 403 before anything else.
func waitReady(ctx context.Context, quit <-chan struct{}, p *proc, probe string) error {
	client := &http.Client{
		Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil,
			DialContext: (&net.Dialer{Timeout: time.Second}).DialContext},
		Timeout:       2 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, probe, nil)
		if err != nil {
			return fmt.Errorf("probe VS Code server: %w", err)
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("VS Code server did not answer on %s: %w", probe, ctx.Err())
		case <-quit:
			return errStopped
		case <-p.Exited():
			return fmt.Errorf("VS Code server %s before it answered", p.why())
		case <-tick.C:
		}
	}
}

// probeURL is where a server listening on host:port answers.
func probeURL(host string, port int) string {
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/"
}

// tail keeps the last tailSize bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - tailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

// lastLines returns up to n last non-empty lines, joined by " | ".
func (t *tail) lastLines(n int) string {
	t.mu.Lock()
	s := string(t.buf)
	t.mu.Unlock()
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
