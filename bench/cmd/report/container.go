package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/container"
	"github.com/actionserver/actionserver/internal/hostnet"
)

// measureContainer starts the runtime image under podman, as the container
// tests make it (agent_skills, jupyter, browser; scripts/container-deps.sh
// and container-base.sh): from the engine's create call to /alive 200 and
// to the first run result, plain and locked down; the image's size; the
// idle container's memory. It needs root; the machine's network state is
// put back afterwards.
func measureContainer(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	notMeasured := func(why string) ([]benchkit.Row, error) {
		return []benchkit.Row{{Metric: "container", Value: "not measured: " + why}}, nil
	}
	if os.Getuid() != 0 {
		return notMeasured("running containers with podman needs root")
	}
	host, err := hostnet.Save()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := host.Restore(); err != nil {
			env.Logf("container: RESTORE FAILED: %v", err)
		}
	}()
	podman, img, err := containerImage(ctx, env)
	if err != nil {
		return nil, err
	}
	sock, stop, err := startPodmanService(podman)
	if err != nil {
		return nil, err
	}
	defer stop()
	e, err := container.Connect(ctx, sock)
	if err != nil {
		return nil, err
	}
	defer e.Close()

	n := 5
	if env.Quick {
		n = 2
	}
	var rows []benchkit.Row
	for _, locked := range []bool{false, true} {
		var alive, first []time.Duration
		for range n {
			a, f, err := startOnce(ctx, e, img, locked)
			if err != nil {
				return nil, err
			}
			alive, first = append(alive, a), append(first, f)
		}
		form := "plain"
		if locked {
			form = "locked down"
		}
		rows = append(rows,
			benchkit.Row{Metric: "container start → /alive 200 (" + form + "), p50", Value: benchkit.Ms(benchkit.Percentile(alive, 50))},
			benchkit.Row{Metric: "container start → first run result (" + form + "), p50", Value: benchkit.Ms(benchkit.Percentile(first, 50))},
		)
	}

	size, err := exec.CommandContext(ctx, podman, "image", "inspect", "--format", "{{.Size}}", img).Output()
	if err != nil {
		return nil, fmt.Errorf("image size: %w", err)
	}
	bytesN, err := strconv.ParseInt(strings.TrimSpace(string(size)), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("image size %q: %w", size, err)
	}
	rows = append(rows, benchkit.Row{Metric: "runtime image size (agent tools, jupyter, agent_skills, chromium)", Value: benchkit.MB(bytesN)})

	idle, err := idleContainerRSS(ctx, e, podman, img)
	if err != nil {
		return nil, err
	}
	rows = append(rows, benchkit.Row{Metric: "idle container RSS, every process (server, bash, Jupyter, kernel)", Value: benchkit.MB(idle)})
	return rows, nil
}

// startOnce starts a container, runs one command, removes it, and returns
// the time from the create call to /alive and to that command's result.
func startOnce(ctx context.Context, e *container.Engine, img string, locked bool) (alive, first time.Duration, err error) {
	start := time.Now()
	s, err := e.Start(ctx, container.Options{Image: img, Name: fmt.Sprintf("as-bench-%d", time.Now().UnixNano()), LockedDown: locked})
	if err != nil {
		return 0, 0, err
	}
	defer e.Remove(context.WithoutCancel(ctx), s.ID, 10*time.Second)
	alive = time.Since(start)
	obs, err := client.New(s.URL, client.WithAPIKey(s.APIKey)).Run(ctx, "echo hi", client.RunOptions{Timeout: time.Minute})
	if err != nil {
		return 0, 0, err
	}
	if obs.Content != "hi" {
		return 0, 0, fmt.Errorf("echo hi gave %q", obs.Content)
	}
	return alive, time.Since(start), nil
}

// idleContainerRSS is the resident memory of every process of a plain
// container, a few seconds after its first command.
func idleContainerRSS(ctx context.Context, e *container.Engine, podman, img string) (int64, error) {
	s, err := e.Start(ctx, container.Options{Image: img, Name: fmt.Sprintf("as-bench-%d", time.Now().UnixNano())})
	if err != nil {
		return 0, err
	}
	defer e.Remove(context.WithoutCancel(ctx), s.ID, 10*time.Second)
	if _, err := client.New(s.URL, client.WithAPIKey(s.APIKey)).Run(ctx, "true", client.RunOptions{Timeout: time.Minute}); err != nil {
		return 0, err
	}
	time.Sleep(3 * time.Second)
	out, err := exec.CommandContext(ctx, podman, "top", s.ID, "hpid").Output()
	if err != nil {
		return 0, fmt.Errorf("podman top: %w", err)
	}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		pid, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
		if err != nil {
			continue // the header
		}
		total += vmRSS(pid)
	}
	if total == 0 {
		return 0, fmt.Errorf("no process of %s found (%q)", s.Name, out)
	}
	return total, nil
}

func vmRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// containerImage installs podman and makes the image as the container
// tests do, sharing their cache: the same base and the same version label
// (so only the binary measured here is new, a one-layer build).
func containerImage(ctx context.Context, env *benchkit.Env) (podman, img string, err error) {
	vars, err := scriptOutput(ctx, nil, "scripts/container-deps.sh")
	if err != nil {
		return "", "", err
	}
	for _, line := range strings.Split(vars, "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "PODMAN_API":
			podman = v
		case "CONTAINERS_CONF":
			os.Setenv("CONTAINERS_CONF", v)
		}
	}
	os.Setenv("PODMAN_IGNORE_CGROUPSV1_WARNING", "1")
	base, err := scriptOutput(ctx, []string{"PODMAN=" + podman}, "scripts/container-base.sh", "bookworm")
	if err != nil {
		return "", "", err
	}
	actionctl := filepath.Join(env.BinDir, "actionctl-container")
	build := exec.CommandContext(ctx, "go", "build", "-tags", "nomsgpack", "-trimpath", "-ldflags", "-X main.version=e2e", "-o", actionctl, "./cmd/actionctl")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("build actionctl: %w\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, actionctl, "build", "--builder", "buildah", "--base-image", strings.TrimSpace(base),
		"--repo", "localhost/action-server-e2e", "--plugins", "agent_skills,jupyter",
		"--server-binary", filepath.Join(env.BinDir, "action-server")).Output()
	if err != nil {
		return "", "", fmt.Errorf("actionctl build: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "image: "); ok {
			img = v
		}
	}
	if img == "" {
		return "", "", fmt.Errorf("actionctl build named no image: %s", out)
	}
	return podman, img, nil
}

func scriptOutput(ctx context.Context, extraEnv []string, script string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, script, args...)
	cmd.Env = append(os.Environ(), extraEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w\n%s", script, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// startPodmanService serves podman's Docker API on a socket of its own
// until stop is called.
func startPodmanService(podman string) (sock string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "bench-podman-")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "podman.sock")
	cmd := exec.Command(podman, "system", "service", "--time=0", "unix://"+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("start podman system service: %w", err)
	}
	stop = func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		os.RemoveAll(dir)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return "unix://" + path, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("podman's API socket %s did not appear", path)
		}
	}
}
