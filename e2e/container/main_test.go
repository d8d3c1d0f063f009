// Package container runs the runtime image under a real engine: podman,
// installed and set up by scripts/container-deps.sh, with a base image
// made locally (scripts/container-base.sh) and the runtime image built by
// `actionctl build`. The tests drive it through podman's CLI, through its
// Docker API socket (started and stopped here) and through the unmodified
// OpenHands DockerRuntime.
//
// They need root. E2E_CONTAINER=skip skips them; otherwise a machine that
// cannot run them fails them when CI is set, and skips them loudly when
// not. TestMain leaves the machine as it found it: no container, no podman
// service, ip_forward and the iptables chains netavark adds put back.
package container

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/actionserver/actionserver/e2e/internal/runtimeimage"
	"github.com/actionserver/actionserver/internal/hostnet"
)

// env is what TestMain set up, for the tests.
var env struct {
	tools   runtimeimage.Tools
	root    string // the checkout
	bin     string // directory with action-server and actionctl
	podman  string // the podman that runs everything (5.6.2, for its Docker API)
	conf    string // CONTAINERS_CONF
	base    string // the local Debian base image
	runtime string // the runtime image: agent_skills, jupyter, browser
	socket  string // unix://... of podman's Docker API service
}

// e2eRepo is where the test images go.
const e2eRepo = runtimeimage.Repo

// namePrefix marks every container the tests create, so TestMain can
// remove what a failed test left.
const namePrefix = "as-e2e-"

func TestMain(m *testing.M) {
	os.Exit(setUpAndRun(m))
}

func setUpAndRun(m *testing.M) int {
	switch os.Getenv("E2E_CONTAINER") {
	case "skip", "0", "no":
		fmt.Fprintln(os.Stderr, "e2e/container: SKIPPED (E2E_CONTAINER says so)")
		return 0
	}
	if os.Getuid() != 0 {
		return unavailable("running containers with podman here needs root")
	}
	log := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "e2e/container: "+format+"\n", a...) }
	root, err := filepath.Abs("../..")
	if err != nil {
		return fail(err)
	}
	env.root = root

	host, err := hostnet.Save()
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err := host.Restore(); err != nil {
			log("RESTORE FAILED: %v", err)
		}
	}()

	start := time.Now()
	tools, err := runtimeimage.Install(root)
	if err != nil {
		return fail(err)
	}
	env.tools = tools
	env.podman, env.conf = tools.Podman, tools.Conf
	log("tools ready (%s) in %.0fs", env.podman, time.Since(start).Seconds())

	if env.bin, err = os.MkdirTemp("", "as-e2e-container-bin-"); err != nil {
		return fail(err)
	}
	defer os.RemoveAll(env.bin)
	if err := tools.BuildBinaries(env.bin); err != nil {
		return fail(err)
	}

	start = time.Now()
	if env.base, err = baseImage("bookworm"); err != nil {
		return fail(err)
	}
	log("base image %s (%.0fs)", env.base, time.Since(start).Seconds())
	start = time.Now()
	if env.runtime, err = buildImage(env.base, "--plugins", "agent_skills,jupyter"); err != nil {
		return fail(err)
	}
	log("runtime image %s (%.0fs)", env.runtime, time.Since(start).Seconds())

	svc, err := startService()
	if err != nil {
		return fail(err)
	}
	defer svc.stop()
	defer removeLeftovers()
	defer pruneOldImages()
	return m.Run()
}

// usedImages are the images this run built or reused.
var usedImages sync.Map

// pruneOldImages removes the images earlier runs built for binaries that
// are gone (their source tags), so that the store does not grow with every
// change of the code. The versioned and lock tags stay: they are the cache
// that makes the next build one layer.
func pruneOldImages() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := podmanCmd(ctx, "images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", "reference="+e2eRepo).Output()
	if err != nil {
		return
	}
	for _, ref := range strings.Fields(string(out)) {
		_, tag, _ := strings.Cut(ref, ":")
		if _, used := usedImages.Load(ref); used || len(strings.Split(tag, "_")) != 4 {
			continue // in use, or not a source tag (as_v<version>_<lock>_<binary>)
		}
		_ = podmanCmd(ctx, "rmi", ref).Run()
	}
}

// unavailable skips the package, or fails it under CI.
func unavailable(why string) int {
	if os.Getenv("CI") != "" {
		fmt.Fprintf(os.Stderr, "e2e/container: FAILED: %s, and CI is set\n", why)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e/container: SKIPPED: %s; the container tests did NOT run\n", why)
	return 0
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "e2e/container: FAILED: %v\n", err)
	return 1
}

// podmanCmd is the podman the tests use, with the settings it needs.
func podmanCmd(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, env.podman, args...)
}

// baseImage makes (or reuses) a local Debian image with the packages.
func baseImage(name string, pkgs ...string) (string, error) {
	return env.tools.BaseImage(name, pkgs...)
}

// buildImage runs `actionctl build` on base with buildah, which shares
// podman's store, and returns the image it names.
func buildImage(base string, flags ...string) (string, error) {
	img, err := runtimeimage.BuildImage(filepath.Join(env.bin, "actionctl"), base, flags...)
	if err == nil {
		usedImages.Store(img, true)
	}
	return img, err
}

// service is podman's Docker API, serving on a socket in a directory of
// its own.
type service struct {
	cmd *exec.Cmd
	dir string
}

func startService() (*service, error) {
	dir, err := os.MkdirTemp("", "as-e2e-podman-")
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "podman.sock")
	cmd := exec.Command(env.podman, "system", "service", "--time=0", "unix://"+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logf, err := os.Create(filepath.Join(dir, "service.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start podman system service: %w", err)
	}
	logf.Close()
	s := &service{cmd: cmd, dir: dir}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("podman's API socket %s did not appear", sock)
		}
		time.Sleep(50 * time.Millisecond)
	}
	env.socket = "unix://" + sock
	return s, nil
}

// stop ends the service and whatever it started in its process group.
func (s *service) stop() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	os.RemoveAll(s.dir)
}

// removeLeftovers removes every container a test made and did not remove.
func removeLeftovers() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := podmanCmd(ctx, "ps", "-a", "--format", "{{.Names}}").Output()
	if err != nil {
		return
	}
	for _, name := range strings.Fields(string(out)) {
		if strings.HasPrefix(name, namePrefix) || strings.HasPrefix(name, "openhands-runtime-"+namePrefix) {
			_ = podmanCmd(ctx, "rm", "-f", "-t", "0", name).Run()
		}
	}
}
