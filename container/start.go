package container

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	mc "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	asclient "github.com/actionserver/actionserver/client"
)

// ServerPort is the port the server listens on inside the runtime image:
// the first word of the default command `actionctl build` gives it.
const ServerPort = 8000

// LockedDownUID is the uid a locked-down container runs as, unless told
// otherwise: not root, and not the image's sandbox user either.
const LockedDownUID = "10001"

// Options say how to start a sandbox. Image is required.
type Options struct {
	Image string
	// Name is the container's name; empty means action-server-<random>.
	Name string
	// Address is the host address the port is published on; the zero
	// value means 127.0.0.1, so the sandbox is reachable from this
	// machine only.
	Address netip.Addr
	// HostPort is the published port; 0 lets the engine pick a free one.
	HostPort int
	// APIKey is the key the server demands; empty means a random one.
	APIKey string
	// Env adds KEY=VALUE pairs to the container's environment.
	Env []string
	// Cmd replaces the image's default command (the server's flags) when
	// not empty. Its first word must stay the port, ServerPort.
	Cmd []string
	// LockedDown runs the container with no privilege at all (see
	// LockDown).
	LockedDown bool
	// User overrides the uid (or uid:gid) the container runs as.
	User string
}

// Sandbox is a started container whose server answers.
type Sandbox struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	URL    string `json:"url"`
	APIKey string `json:"api_key"`
	Image  string `json:"image"`
}

// LockDown makes hc the locked-down form: every capability dropped, no
// privilege gained through setuid binaries, at most 512 processes, a
// read-only root file system with only /workspace and /tmp writable (in
// memory). This is how the newest OpenHands execution containers run, and
// what Kubernetes' restricted Pod Security Standard asks.
func LockDown(hc *mc.HostConfig) {
	pids := int64(512)
	hc.CapDrop = []string{"ALL"}
	hc.SecurityOpt = append(hc.SecurityOpt, "no-new-privileges")
	hc.PidsLimit = &pids
	hc.ReadonlyRootfs = true
	hc.Tmpfs = map[string]string{
		"/workspace": "rw,nosuid,nodev,mode=1777",
		"/tmp":       "rw,nosuid,nodev,mode=1777",
	}
}

// Start creates and starts the container, then waits until its server
// answers /alive or ctx ends. A container that fails to come up is
// removed, and the error carries the end of its log.
func (e *Engine) Start(ctx context.Context, o Options) (*Sandbox, error) {
	if o.Image == "" {
		return nil, errors.New("no image")
	}
	addr := o.Address
	if !addr.IsValid() {
		addr = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	key := o.APIKey
	if key == "" {
		var err error
		if key, err = randomHex(24); err != nil {
			return nil, err
		}
	}
	name := o.Name
	if name == "" {
		suffix, err := randomHex(4)
		if err != nil {
			return nil, err
		}
		name = "action-server-" + suffix
	}
	port := network.MustParsePort(strconv.Itoa(ServerPort) + "/tcp")
	hostPort := ""
	if o.HostPort != 0 {
		hostPort = strconv.Itoa(o.HostPort)
	}
	cfg := &mc.Config{
		Image:        o.Image,
		Env:          append([]string{"SESSION_API_KEY=" + key}, o.Env...),
		ExposedPorts: network.PortSet{port: {}},
		Cmd:          o.Cmd,
		User:         o.User,
	}
	hc := &mc.HostConfig{
		PortBindings: network.PortMap{port: {{HostIP: addr, HostPort: hostPort}}},
	}
	if o.LockedDown {
		LockDown(hc)
		if cfg.User == "" {
			cfg.User = LockedDownUID
		}
		// The uid has no home in the image, and the root file system is
		// read-only: give it one where it can write.
		if !hasEnv(o.Env, "HOME") {
			cfg.Env = append(cfg.Env, "HOME=/tmp")
		}
	}
	created, err := e.api.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: hc})
	if err != nil {
		return nil, fmt.Errorf("create container from %s: %w", o.Image, err)
	}
	s := &Sandbox{ID: created.ID, Name: name, APIKey: key, Image: o.Image}
	fail := func(err error) (*Sandbox, error) {
		tail := e.logTail(context.WithoutCancel(ctx), s.ID)
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_, _ = e.api.ContainerRemove(rmCtx, s.ID, client.ContainerRemoveOptions{Force: true})
		if tail != "" {
			return nil, fmt.Errorf("%w; the container's last lines:\n%s", err, tail)
		}
		return nil, err
	}
	if _, err := e.api.ContainerStart(ctx, s.ID, client.ContainerStartOptions{}); err != nil {
		return fail(fmt.Errorf("start container %s: %w", name, err))
	}
	info, err := e.api.ContainerInspect(ctx, s.ID, client.ContainerInspectOptions{})
	if err != nil {
		return fail(fmt.Errorf("inspect container %s: %w", name, err))
	}
	published := publishedPort(info.Container.NetworkSettings, port)
	if published == "" {
		return fail(fmt.Errorf("container %s: port %s was not published", name, port))
	}
	s.URL = "http://" + net.JoinHostPort(addr.String(), published)
	if err := e.waitAlive(ctx, s); err != nil {
		return fail(err)
	}
	return s, nil
}

// waitAlive waits for /alive while watching the container: one that
// exits will never answer, so that ends the wait at once.
func (e *Engine) waitAlive(ctx context.Context, s *Sandbox) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			info, err := e.api.ContainerInspect(ctx, s.ID, client.ContainerInspectOptions{})
			if err != nil || info.Container.State == nil {
				continue
			}
			if st := info.Container.State; st.Status != mc.StateRunning && st.Status != mc.StateCreated {
				cancel(fmt.Errorf("container %s %s with status %d before its server answered", s.Name, st.Status, st.ExitCode))
				return
			}
		}
	}()
	// A fixed, short poll rather than the client's backoff: a container
	// takes seconds to start, and the moment it answers is what callers
	// (and the start-up benchmark) wait for.
	c := asclient.New(s.URL)
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 5*time.Second)
		err := c.Alive(attempt)
		cancelAttempt()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
				return cause
			}
			return fmt.Errorf("wait for %s to answer /alive: %w (last error: %v)", s.Name, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Remove stops the container, giving its server grace seconds to end its
// commands, and removes it. A container that is already gone is not an
// error.
func (e *Engine) Remove(ctx context.Context, nameOrID string, grace time.Duration) error {
	secs := int(grace / time.Second)
	if _, err := e.api.ContainerStop(ctx, nameOrID, client.ContainerStopOptions{Timeout: &secs}); err != nil && !isNotFound(err) {
		return fmt.Errorf("stop container %s: %w", nameOrID, err)
	}
	if _, err := e.api.ContainerRemove(ctx, nameOrID, client.ContainerRemoveOptions{Force: true}); err != nil && !isNotFound(err) {
		return fmt.Errorf("remove container %s: %w", nameOrID, err)
	}
	return nil
}

// logTail is the end of the container's output, for an error message.
func (e *Engine) logTail(ctx context.Context, id string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rc, err := e.api.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: "20"})
	if err != nil {
		return ""
	}
	defer rc.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, io.LimitReader(rc, 64<<10)); err != nil && out.Len() == 0 {
		return ""
	}
	return strings.TrimRight(out.String(), "\n")
}

func publishedPort(ns *mc.NetworkSettings, port network.Port) string {
	if ns == nil {
		return ""
	}
	for _, b := range ns.Ports[port] {
		if b.HostPort != "" {
			return b.HostPort
		}
	}
	return ""
}

func hasEnv(env []string, key string) bool {
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k == key {
			return true
		}
	}
	return false
}

func isNotFound(err error) bool { return cerrdefs.IsNotFound(err) }

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return hex.EncodeToString(b), nil
}
