// Package e2e drives the built action-server binary over HTTP on loopback,
// as a host does.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/internal/freeport"
	"github.com/actionserver/actionserver/shell"
)

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "action-server-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	for _, cmd := range []string{"action-server", "actionctl"} {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, cmd), "../cmd/"+cmd)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", cmd, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	sweepCgroups()
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is one running action-server process.
type server struct {
	URL     string
	WorkDir string
	Client  *client.Client
	cmd     *exec.Cmd
	logs    *syncBuffer
	exited  chan struct{}
}

type startOpts struct {
	args    []string // after the port; default: a fresh workdir, current user, no browser
	env     []string // added to a clean environment
	apiKey  string
	noWait  bool
	workDir string
	// wrap is a command line the binary and its arguments are appended
	// to, for running it in another environment (a namespace, ...).
	wrap []string
}

// freePort asks the kernel for a free loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	port, err := freeport.Pick("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// startServer runs the binary in OpenHands' argv form on loopback, with a
// clean HOME so a developer's ~/.bashrc cannot change results.
func startServer(t *testing.T, o startOpts) *server {
	t.Helper()
	port := freePort(t)
	if o.workDir == "" {
		o.workDir = t.TempDir()
	}
	args := append([]string{strconv.Itoa(port), "--host", "127.0.0.1"}, o.args...)
	if len(o.args) == 0 {
		args = append(args, "--working-dir", o.workDir, "--no-enable-browser")
	}
	argv := append(append(o.wrap[:len(o.wrap):len(o.wrap)], filepath.Join(binDir, "action-server")), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8"}, o.env...)
	if o.apiKey != "" {
		cmd.Env = append(cmd.Env, "SESSION_API_KEY="+o.apiKey)
	}
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	s := &server{
		URL:     fmt.Sprintf("http://127.0.0.1:%d", port),
		WorkDir: o.workDir,
		cmd:     cmd,
		logs:    logs,
		exited:  make(chan struct{}),
	}
	go func() { cmd.Wait(); close(s.exited) }()
	s.Client = client.New(s.URL, client.WithAPIKey(o.apiKey))
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	if !o.noWait {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, s.Client.WaitUntilAlive(ctx), "server log:\n%s", logs.String())
	}
	return s
}

// stop ends the server with SIGTERM, then kills its process group.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Sandbox user of the tests that need one; the server creates it (with
// passwordless sudo) when it does not exist.
const (
	testUser = "astest"
	testUID  = 1990
)

// startAsSandboxUser starts the server as root with the test user as the
// sandbox user, in a workspace that user can reach (t.TempDir's parents
// are private to root). It skips when not root.
func startAsSandboxUser(t *testing.T, extraArgs ...string) (*server, string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("a sandbox user needs root")
	}
	drop := "/etc/sudoers.d/action-server-" + testUser
	if _, err := user.Lookup(testUser); err != nil {
		t.Cleanup(func() {
			exec.Command("userdel", "-r", testUser).Run()
			os.Remove(drop)
		})
	} else if _, err := os.Stat(drop); err != nil {
		// Left by a run stopped before its clean-up: the server leaves an
		// existing user as it is, so give it the sudo it would have been
		// created with, and remove both afterwards.
		require.NoError(t, os.WriteFile(drop, []byte(testUser+" ALL=(ALL) NOPASSWD:ALL\n"), 0o440))
		t.Cleanup(func() {
			exec.Command("userdel", "-r", testUser).Run()
			os.Remove(drop)
		})
	}
	parent, err := os.MkdirTemp("", "e2e-user-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(parent) })
	require.NoError(t, os.Chmod(parent, 0o755))
	ws := filepath.Join(parent, "workspace")
	args := append([]string{"--working-dir", ws, "--username", testUser, "--user-id", strconv.Itoa(testUID), "--no-enable-browser"}, extraArgs...)
	return startServer(t, startOpts{workDir: ws, args: args}), ws
}

// sweepCgroups removes the sessions' cgroups that servers the tests killed
// with SIGKILL left behind, as a server's start-up does with those that are
// empty, once their processes (which the kernel ends with a PID namespace)
// are gone.
func sweepCgroups() {
	for range 50 {
		cg, err := shell.NewCgroups()
		if err != nil {
			return
		}
		cg.Close()
		left, _ := filepath.Glob(filepath.Join(filepath.Dir(cg.Dir()), "action-server-*"))
		if len(left) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond) // the kernel is still ending them
	}
}
