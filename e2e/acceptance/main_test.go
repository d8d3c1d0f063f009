package acceptance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/actionserver/actionserver/internal/freeport"
)

// sandboxUserName stands for upstream's "openhands" user. It is a name no
// machine is likely to have, so the suite never touches a real account.
const sandboxUserName = "ohaccept"

var (
	// serverBin is the action-server binary built for this run.
	serverBin string

	// sandboxUID is the uid asked for with --user-id.
	sandboxUID int

	userMu      sync.Mutex
	userReady   bool
	userCreated bool // by this run, so it is removed at the end
)

func TestMain(m *testing.M) {
	flag.Parse()
	// Most of these tests wait on timeouts rather than the CPU; running
	// only GOMAXPROCS of them at a time would make the suite several
	// times slower for nothing.
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		_ = flag.Set("test.parallel", "8")
	}

	dir, err := os.MkdirTemp("", "acceptance-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "action-server")
	build := exec.Command("go", "build", "-o", serverBin, "../../cmd/action-server")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build action-server: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	sandboxUID = pickUID()

	code := m.Run()

	if userCreated {
		if out, err := exec.Command("userdel", "-r", sandboxUserName).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "userdel %s: %v: %s\n", sandboxUserName, err, out)
		}
		// The server grants sudo with a drop-in named after the user.
		os.Remove(filepath.Join("/etc/sudoers.d", "action-server-"+sandboxUserName))
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// pickUID returns the uid of an existing sandbox user, or a free one.
func pickUID() int {
	if u, err := user.Lookup(sandboxUserName); err == nil {
		if n, err := strconv.Atoi(u.Uid); err == nil {
			return n
		}
	}
	for uid := 2101; ; uid++ {
		if _, err := user.LookupId(strconv.Itoa(uid)); err != nil {
			return uid
		}
	}
}

// ensureSandboxUser makes the server create the sandbox user, once. Every
// later server finds it, as upstream's servers find "openhands" in their
// image. Creating it from one server first keeps parallel servers from
// racing each other to useradd.
func ensureSandboxUser(t *testing.T) {
	t.Helper()
	userMu.Lock()
	defer userMu.Unlock()
	if userReady {
		return
	}
	if _, err := user.Lookup(sandboxUserName); err != nil {
		createSandboxUser(t)
		userCreated = true
	} else {
		// Left by a run that was stopped before its clean-up. Upstream's
		// "openhands" has passwordless sudo in its image, and a server
		// finding an existing user leaves it as it is, so give the
		// leftover what the image would, and remove both at the end.
		drop := filepath.Join("/etc/sudoers.d", "action-server-"+sandboxUserName)
		if _, err := os.Stat(drop); err != nil {
			if err := os.WriteFile(drop, []byte(sandboxUserName+" ALL=(ALL) NOPASSWD:ALL\n"), 0o440); err != nil {
				t.Fatalf("give the leftover sandbox user sudo: %v", err)
			}
		}
		userCreated = true
	}
	u, err := user.Lookup(sandboxUserName)
	if err != nil {
		t.Fatalf("the server did not create the sandbox user %s: %v", sandboxUserName, err)
	}
	home := u.HomeDir
	if _, err := os.Stat(home); err != nil {
		t.Fatalf("the sandbox user's home %s is missing: %v", home, err)
	}
	userReady = true
}

func createSandboxUser(t *testing.T) {
	t.Helper()
	parent, err := os.MkdirTemp("", "acceptance-create-user-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(parent)
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(parent, "workspace")
	port := freePort(t)
	cmd := exec.Command(serverBin, strconv.Itoa(port), "--host", "127.0.0.1", "--working-dir", ws,
		"--username", sandboxUserName, "--user-id", strconv.Itoa(sandboxUID), "--no-enable-browser")
	cmd.Env = []string{"PATH=" + sandboxPath, "HOME=/root", "LANG=C.UTF-8"}
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}()
	if err := waitAlive(fmt.Sprintf("http://127.0.0.1:%d", port), exited, time.Minute); err != nil {
		t.Fatalf("server creating the sandbox user: %v\n%s", err, logs.String())
	}
}

// waitAlive polls /alive until it answers 2xx, as the host's
// wait_until_alive does (any other answer or a refused connection means
// "not yet").
func waitAlive(url string, exited <-chan struct{}, limit time.Duration) error {
	hc := &http.Client{Timeout: 5 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/alive", nil)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("the server exited before it was alive")
		case <-ctx.Done():
			return fmt.Errorf("not alive after %v (last error: %v)", limit, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// freePort asks the kernel for a free port, like the suite's dynamic_port.
func freePort(t *testing.T) int {
	t.Helper()
	port, err := freeport.Pick("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return port
}

type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b = append(b.b, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.b)
}
