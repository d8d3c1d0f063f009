package e2e

import (
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

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/event"
)

// nobody is the unprivileged account the non-root servers run as.
const nobody = 65534

// startAsNonRoot starts the server as an unprivileged user (its own
// sandbox user), in a workspace and HOME of that user's; home is where
// the test may put start-up files first. It skips when not root (the
// server is then non-root anyway: use startServer).
func startAsNonRoot(t *testing.T, o startOpts, home string) *server {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("switching to an unprivileged user needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv is not installed")
	}
	require.NoError(t, os.Chmod(binDir, 0o755)) // the binary must be reachable
	parent, err := os.MkdirTemp("", "e2e-nonroot-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(parent) })
	require.NoError(t, os.Chmod(parent, 0o755))
	ws := filepath.Join(parent, "workspace")
	if home == "" {
		home = filepath.Join(parent, "home")
		require.NoError(t, os.Mkdir(home, 0o755))
	}
	require.NoError(t, os.Mkdir(ws, 0o755))
	for _, d := range []string{ws, home} {
		require.NoError(t, filepath.Walk(d, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, nobody, nobody)
		}))
	}
	o.workDir = ws
	o.wrap = []string{"setpriv", "--reuid", strconv.Itoa(nobody), "--regid", strconv.Itoa(nobody), "--clear-groups"}
	o.env = append([]string{"HOME=" + home, "USER=nobody", "FILE_VIEWER_URL_FILE=" + filepath.Join(parent, "viewer-url")}, o.env...)
	return startServer(t, o)
}

// TestShellStart_HangingRcFileFailsTheActionClearly: a ~/.bashrc that
// waits (as `pyenv init` waiting on a stale lock does) used to hold every
// run action, with no error and no log line. Now the run action gets an
// error observation at the deadline that names the start-up files, the log
// and /server_info say so, and once the file is mended the next action
// starts the shell.
func TestShellStart_HangingRcFileFailsTheActionClearly(t *testing.T) {
	home := t.TempDir()
	rc := filepath.Join(home, ".bashrc")
	require.NoError(t, os.WriteFile(rc, []byte("echo waiting for a lock\nsleep 600\n"), 0o644))
	s := startServer(t, startOpts{env: []string{"HOME=" + home, "SHELL_START_TIMEOUT_SECONDS=2"}})
	ctx := ctxT(t)

	obs, err := s.Client.Execute(ctx, event.NewCmdRun("echo up"))
	require.NoError(t, err)
	require.IsType(t, &event.Error{}, obs, "%#v", obs)
	assert.Contains(t, obs.Text(), "start-up files")
	assert.Contains(t, obs.Text(), "~/.bashrc")
	assert.Contains(t, obs.Text(), "waiting for a lock", "what bash printed is shown")

	info, err := s.Client.ServerInfo(ctx)
	require.NoError(t, err)
	assert.Equal(t, api.ShellFailed, info.Shell.State)
	assert.Contains(t, info.Shell.Error, "~/.bashrc")
	assert.Contains(t, s.logs.String(), "the default shell did not start")
	require.NoError(t, s.Client.Alive(ctx), "the server stays up")

	require.NoError(t, os.WriteFile(rc, []byte("true\n"), 0o644))
	out, err := s.Client.Run(ctx, "echo up", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "up", out.Content)
	info, err = s.Client.ServerInfo(ctx)
	require.NoError(t, err)
	assert.Equal(t, api.ShellStatus{State: api.ShellReady}, info.Shell)
}

// TestCommandFile_UnreadableRunsNothingStale: an agent that makes its
// command file unreadable (as the server's own user it can) used to see
// its previous command run again, reported as the new one with exit code
// 0. Now the command fails saying nothing ran, and the next one runs.
func TestCommandFile_UnreadableRunsNothingStale(t *testing.T) {
	s := startAsNonRoot(t, startOpts{}, "")
	ctx := ctxT(t)
	counter := filepath.Join(s.WorkDir, "counter")
	out, err := s.Client.Run(ctx, `echo x >>`+counter+`; chmod 000 "${__as_f%/*}"`, client.RunOptions{})
	require.NoError(t, err)
	require.Equal(t, 0, out.Metadata.ExitCode, out.Content)

	out, err = s.Client.Run(ctx, "echo second", client.RunOptions{})
	require.NoError(t, err)
	assert.Contains(t, out.Content, "nothing was run")
	assert.NotEqual(t, 0, out.Metadata.ExitCode)
	data, err := os.ReadFile(counter)
	require.NoError(t, err)
	assert.Equal(t, "x\n", string(data), "the previous command ran once")

	out, err = s.Client.Run(ctx, "echo third", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "third", out.Content)
}

// TestCommandFile_SandboxUserCannotRedirectRootsWrites: the session's
// directory used to be the sandbox user's, and root re-opened the command
// file in it by path, so a link planted there made root overwrite a
// root-only file with the agent's next command.
func TestCommandFile_SandboxUserCannotRedirectRootsWrites(t *testing.T) {
	s, _ := startAsSandboxUser(t)
	ctx := ctxT(t)
	victim := filepath.Join(t.TempDir(), "root-only")
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o600))

	out, err := s.Client.Run(ctx, `rm -f "$__as_f"; ln -s `+victim+` "$__as_f"; echo rc=$?`, client.RunOptions{})
	require.NoError(t, err)
	assert.Contains(t, out.Content, "Permission denied")
	out, err = s.Client.Run(ctx, "echo next command", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "next command", out.Content)
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(data))

	out, err = s.Client.Run(ctx, `stat -c '%u %a' "${__as_f%/*}"`, client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "0 750", strings.TrimSpace(out.Content), "the session directory is root's")
}

// pidsIn reads the pids a command wrote, one a line, once there are n.
func pidsIn(t *testing.T, file string, n int) []int {
	t.Helper()
	var pids []int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		pids = pids[:0]
		for _, f := range strings.Fields(string(data)) {
			pid, err := strconv.Atoi(f)
			require.NoError(t, err)
			pids = append(pids, pid)
		}
		return len(pids) >= n
	}, 30*time.Second, 20*time.Millisecond, "%d pids in %s", n, file)
	return pids
}

// exited reports whether pid is gone (a zombie counts as gone).
func exited(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// killLeftovers ends what a failed test left running.
func killLeftovers(t *testing.T, pids *[]int) {
	t.Cleanup(func() {
		for _, pid := range *pids {
			if !exited(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}
