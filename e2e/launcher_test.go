package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
)

// hostLauncherArgs is the command line OpenHands' DockerRuntime runs in a
// runtime image, after the launcher's path (contract §1.1), plus --host so
// the test binds loopback only.
func hostLauncherArgs(port int, workDir string) []string {
	return []string{"run", "-n", "openhands", "poetry", "run", "python", "-u", "-m",
		"openhands.runtime.action_execution_server", strconv.Itoa(port), "--working-dir", workDir,
		"--username", currentUser(), "--user-id", strconv.Itoa(os.Getuid()), "--no-enable-browser", "--host", "127.0.0.1"}
}

func currentUser() string {
	out, err := exec.Command("id", "-un").Output()
	if err != nil {
		return "root"
	}
	return strings.TrimSpace(string(out))
}

// startProcess runs cmd in its own process group and waits until the
// server at port answers /alive; the process ends with the test.
func startProcess(t *testing.T, cmd *exec.Cmd, port int) *client.Client {
	t.Helper()
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", filepath.Base(cmd.Path), logs.String())
		}
	})
	c := client.New(fmt.Sprintf("http://127.0.0.1:%d", port))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		select {
		case <-exited: // no point waiting for a server that is gone
			cancel()
		case <-ctx.Done():
		}
	}()
	require.NoError(t, c.WaitUntilAlive(ctx), "log:\n%s", logs.String())
	return c
}

func TestLauncher_StartsFromTheHostsMicromambaCommandLine(t *testing.T) {
	// Runtime images link /openhands/micromamba/bin/micromamba to the
	// server, so the unmodified host's command line starts it.
	dir := t.TempDir()
	launcher := filepath.Join(dir, "micromamba")
	require.NoError(t, os.Symlink(filepath.Join(binDir, "action-server"), launcher))
	port, ws := freePort(t), t.TempDir()
	cmd := exec.Command(launcher, hostLauncherArgs(port, ws)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	c := startProcess(t, cmd, port)

	obs, err := c.Run(ctxT(t), "echo launched; pwd", client.RunOptions{Timeout: 10 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, "launched\n"+ws, obs.Content)
	assert.Equal(t, 0, obs.Metadata.ExitCode)
}

func TestLauncher_RefusesOtherCommands(t *testing.T) {
	launcher := filepath.Join(t.TempDir(), "micromamba")
	require.NoError(t, os.Symlink(filepath.Join(binDir, "action-server"), launcher))
	out, err := exec.Command(launcher, "install", "numpy").CombinedOutput()
	require.Error(t, err)
	assert.Equal(t, 2, exitCodeOf(err))
	assert.Contains(t, string(out), "this launcher starts the action server")
}

func exitCodeOf(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

func TestBinary_IsStaticAndRunsWithAnEmptyEnvironment(t *testing.T) {
	bin := filepath.Join(binDir, "action-server")
	out, err := exec.Command("file", "-L", bin).Output()
	require.NoError(t, err, "the file command (package file) is installed by scripts/deps.sh")
	assert.Contains(t, string(out), "statically linked")
	out, err = exec.Command("ldd", bin).CombinedOutput()
	assert.Error(t, err, "ldd must fail on a static binary: %s", out)

	port, ws := freePort(t), t.TempDir()
	cmd := exec.Command(bin, strconv.Itoa(port), "--host", "127.0.0.1", "--working-dir", ws, "--no-enable-browser")
	cmd.Env = []string{} // not nil: nil would mean this process's environment
	c := startProcess(t, cmd, port)
	obs, err := c.Run(ctxT(t), "echo $PATH; command -v bash", client.RunOptions{Timeout: 10 * time.Second})
	require.NoError(t, err)
	require.Equal(t, 0, obs.Metadata.ExitCode, obs.Content)
	assert.Contains(t, obs.Content, "/usr/bin", "a default PATH when there is none")
}

func TestActionctl_BuildDryRunWritesTheContextAndPrintsTags(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ctx")
	ctl := filepath.Join(binDir, "actionctl")
	out, err := exec.Command(ctl, "build", "--base-image", "debian:bookworm", "--plugins", "agent_skills,jupyter",
		"--dry-run", dir, "--repo", "example.com/rt").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, want := range []string{"versioned: example.com/rt:as_vdev_debian_t_bookworm\n", "lock: example.com/rt:as_vdev_", "source: example.com/rt:as_vdev_"} {
		assert.Contains(t, string(out), want)
	}
	df, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	require.NoError(t, err)
	assert.Contains(t, string(df), "\nFROM debian:bookworm\n")
	assert.Contains(t, string(df), `CMD ["8000","--working-dir","/workspace","--username","openhands","--user-id","1000","--plugins","agent_skills","jupyter"]`)
	assert.FileExists(t, filepath.Join(dir, "action-server"), "the binary next to actionctl")

	out, err = exec.Command(ctl, "build", "--base-image", "alpine:3.20", "--dry-run", t.TempDir()).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "base image alpine:3.20 is not of the Debian/Ubuntu family")
}
