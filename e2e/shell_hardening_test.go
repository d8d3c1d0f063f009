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
	"github.com/actionserver/actionserver/internal/proctest"
	"github.com/actionserver/actionserver/shell"
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
	env := []string{"SHELL_START_TIMEOUT_SECONDS=2"}
	for _, tc := range []struct {
		name  string
		start func(t *testing.T, home string) *server
	}{
		{"as the server's user", func(t *testing.T, home string) *server {
			return startServer(t, startOpts{env: append(env, "HOME="+home)})
		}},
		{"as a non-root server", func(t *testing.T, home string) *server {
			return startAsNonRoot(t, startOpts{env: env}, home)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// t.TempDir's parents are private to root.
			home, err := os.MkdirTemp("", "e2e-home-")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(home) })
			require.NoError(t, os.Chmod(home, 0o755))
			rc := filepath.Join(home, ".bashrc")
			require.NoError(t, os.WriteFile(rc, []byte("echo waiting for a lock\nsleep 600\n"), 0o644))
			s := tc.start(t, home)
			ctx := ctxT(t)

			obs, err := s.Client.Execute(ctx, event.NewCmdRun("echo up"))
			require.NoError(t, err)
			require.IsType(t, &event.ErrorObservation{}, obs, "%#v", obs)
			assert.Contains(t, obs.Text(), "start-up files")
			assert.Contains(t, obs.Text(), "~/.bashrc")
			assert.Contains(t, obs.Text(), "waiting for a lock", "what bash printed is shown")

			info, err := s.Client.ServerInfo(ctx)
			require.NoError(t, err)
			assert.Equal(t, api.ShellFailed, info.Shell.State)
			assert.Contains(t, info.Shell.Error, "~/.bashrc")
			// The log is copied from a pipe by another goroutine: wait for it.
			assert.Eventually(t, func() bool { return strings.Contains(s.logs.String(), "the default shell did not start") },
				10*time.Second, 10*time.Millisecond, "logged: %s", s.logs.String())
			require.NoError(t, s.Client.Alive(ctx), "the server stays up")

			require.NoError(t, os.WriteFile(rc, []byte("true\n"), 0o644))
			out, err := s.Client.Run(ctx, "echo up", client.RunOptions{})
			require.NoError(t, err)
			assert.Equal(t, "up", out.Content)
			info, err = s.Client.ServerInfo(ctx)
			require.NoError(t, err)
			assert.Equal(t, api.ShellStatus{State: api.ShellReady}, info.Shell)
		})
	}
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

// TestPipe_OrphansDieWithTheSessionAndTheServer: what piped commands left
// running used to survive DELETE /sessions/{id} (50 of 50) and the
// server's SIGTERM (30 of 30). Now both end them, within the shutdown's
// five seconds: as root, as root for a sandbox user, and as non-root.
func TestPipe_OrphansDieWithTheSessionAndTheServer(t *testing.T) {
	starts := []struct {
		name  string
		start func(t *testing.T) *server
	}{
		{"as the server's user", func(t *testing.T) *server { return startServer(t, startOpts{}) }},
		{"as root for a sandbox user", func(t *testing.T) *server { s, _ := startAsSandboxUser(t); return s }},
		{"as a non-root server", func(t *testing.T) *server { return startAsNonRoot(t, startOpts{}, "") }},
	}
	for _, st := range starts {
		t.Run(st.name, func(t *testing.T) {
			s := st.start(t)
			ctx := ctxT(t)
			var all []int
			proctest.KillLeftovers(t, &all)
			orphans := func(session string) []int {
				file := filepath.Join(s.WorkDir, session+".pids")
				for range 5 {
					_, err := s.Client.StartPipe(ctx, session, proctest.OrphanScript(file), client.PipeOptions{})
					require.NoError(t, err)
				}
				pids := proctest.ReadPIDs(t, file, 10)
				all = append(all, pids...)
				return pids
			}

			_, err := s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: "doomed"})
			require.NoError(t, err)
			pids := orphans("doomed")
			require.NoError(t, s.Client.DeleteSession(ctx, "doomed"))
			for _, pid := range pids {
				assert.Eventually(t, func() bool { return proctest.Exited(pid) }, 10*time.Second, 10*time.Millisecond,
					"pid %d ended with its session", pid)
			}

			_, err = s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: "kept"})
			require.NoError(t, err)
			pids = append(orphans("kept"), orphans("default")...)
			start := time.Now()
			require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
			select {
			case <-s.exited:
			case <-time.After(10 * time.Second):
				t.Fatal("the server did not exit after SIGTERM")
			}
			assert.Less(t, time.Since(start), 5*time.Second, "shutdown stays within five seconds")
			for _, pid := range pids {
				assert.Eventually(t, func() bool { return proctest.Exited(pid) }, 10*time.Second, 10*time.Millisecond,
					"pid %d ended with the server", pid)
			}
		})
	}
}

// TestPipe_TooManyAtOnceAnswer429: piped commands per session were
// unbounded; past the cap a start is refused with 429 until one ends.
func TestPipe_TooManyAtOnceAnswer429(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	var ids []int64
	for range shell.DefaultMaxPipes {
		c, err := s.Client.StartPipe(ctx, "default", "exec sleep 1000", client.PipeOptions{})
		require.NoError(t, err)
		ids = append(ids, c.ID)
	}
	_, err := s.Client.StartPipe(ctx, "default", "echo one too many", client.PipeOptions{})
	var apiErr *client.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 429, apiErr.StatusCode)
	assert.Contains(t, apiErr.Detail, "piped commands")

	// The first: more run than the session's history holds, and every
	// running one stays reachable.
	last := ids[0]
	require.NoError(t, s.Client.SignalPipe(ctx, "default", last, "SIGKILL"))
	// Its place is free once it has ended: until then, 429.
	assert.Eventually(t, func() bool {
		_, err = s.Client.StartPipe(ctx, "default", "echo room again", client.PipeOptions{})
		return err == nil
	}, 30*time.Second, 10*time.Millisecond, "an ended command frees its place: %v", err)
}

// TestSession_SetsidEscapeesDieWhereCgroupsAre: a process that calls
// setsid leaves its terminal session and process group, and a job that job
// control moved leaves a piped command's group; where the server
// can manage cgroup v2 (root here), the session's cgroup ends it too, on
// DELETE and on SIGTERM.
func TestSession_SetsidEscapeesDieWhereCgroupsAre(t *testing.T) {
	probe, err := shell.NewCgroups()
	if err != nil {
		t.Skipf("no cgroup v2 to manage here: %v", err)
	}
	require.NoError(t, probe.Close())
	s, _ := startAsSandboxUser(t)
	ctx := ctxT(t)
	var all []int
	proctest.KillLeftovers(t, &all)
	escapees := func(session string) []int {
		file := filepath.Join(s.WorkDir, session+".pids")
		// setsid forks when it leads a group already: the process
		// writes its own pid.
		escape := `setsid bash -c 'echo $$ >>` + file + `; exec sleep 1000' &`
		// Job control moves a job to a group of its own.
		moved := "\nset -m; sleep 1002 & echo $! >>" + file
		_, err := s.Client.StartPipe(ctx, session, escape+moved, client.PipeOptions{})
		require.NoError(t, err)
		_, err = s.Client.StartCommand(ctx, session, escape)
		require.NoError(t, err)
		pids := proctest.ReadPIDs(t, file, 3)
		all = append(all, pids...)
		return pids
	}
	_, err = s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: "doomed"})
	require.NoError(t, err)
	pids := escapees("doomed")
	require.NoError(t, s.Client.DeleteSession(ctx, "doomed"))
	for _, pid := range pids {
		assert.Eventually(t, func() bool { return proctest.Exited(pid) }, 10*time.Second, 10*time.Millisecond, "pid %d ended with its session", pid)
	}
	pids = escapees("default")
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	<-s.exited
	for _, pid := range pids {
		assert.Eventually(t, func() bool { return proctest.Exited(pid) }, 10*time.Second, 10*time.Millisecond, "pid %d ended with the server", pid)
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(probe.Dir()), "action-server-"+strconv.Itoa(s.cmd.Process.Pid)+"-*"))
	assert.Empty(t, matches, "the server removed its cgroups")
}
