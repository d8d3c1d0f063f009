package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
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
	"golang.org/x/sys/unix"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/event"
)

// smallDisk mounts a 1 MB tmpfs inside the workspace.
func smallDisk(t *testing.T, s *server) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("mounting a small file system needs root")
	}
	dir := filepath.Join(s.WorkDir, "small")
	require.NoError(t, os.Mkdir(dir, 0o777))
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput()
	require.NoError(t, err, "mount tmpfs: %s", out)
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

func TestFault_DiskFullKeepsTheOldFile(t *testing.T) {
	s := startServer(t, startOpts{})
	dir := smallDisk(t, s)
	ctx := ctxT(t)
	keep := filepath.Join(dir, "keep.txt")
	require.NoError(t, os.WriteFile(keep, []byte("old\n"), 0o644))
	big := strings.Repeat("0123456789abcdef", 128<<10) // 2 MB

	// write: a server-side failure the host sees as a 500 with the reason.
	_, err := s.Client.Execute(ctx, event.NewFileWrite(keep, big))
	var apiErr *client.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 500, apiErr.StatusCode)
	assert.Contains(t, apiErr.Detail, "no space left on device")

	// edit: the editor's own wording, as content.
	edit := event.NewFileEdit("str_replace", keep)
	edit.OldStr, edit.NewStr = strPtr("old"), strPtr(big)
	res, err := s.Client.Edit(ctx, edit)
	require.NoError(t, err)
	assert.Contains(t, res.Content, "No space left on device")

	// upload: refused with the reason.
	src := filepath.Join(t.TempDir(), "keep.txt")
	require.NoError(t, os.WriteFile(src, []byte(big), 0o644))
	err = s.Client.Upload(ctx, src, dir, false, nil)
	require.ErrorAs(t, err, &apiErr)
	assert.Contains(t, apiErr.Detail, "no space left on device")

	data, err := os.ReadFile(keep)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(data), "the old file is intact")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no partial or temporary files are left behind")

	// And the server goes on.
	obs, err := s.Client.Run(ctx, "echo fine", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "fine", obs.Content)
}

func TestFault_ClientGoneMidCommandLeaksNothing(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	_, err := s.Client.Run(ctx, "true", client.RunOptions{})
	require.NoError(t, err)
	base, err := s.Client.ServerInfo(ctx)
	require.NoError(t, err)

	for range 5 {
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err = s.Client.Run(cctx, "sleep 30", client.RunOptions{Blocking: true, Timeout: time.Minute})
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		// The command goes on in the shell, as upstream's does; the agent
		// stops it.
		obs, err := s.Client.Run(ctx, "C-c", client.RunOptions{IsInput: true})
		require.NoError(t, err)
		require.Equal(t, 130, obs.Metadata.ExitCode, obs.Content)
	}
	assert.Eventually(t, func() bool {
		now, err := s.Client.ServerInfo(ctx)
		return err == nil && now.Runtime.Goroutines <= base.Runtime.Goroutines+2 &&
			now.Runtime.OpenFDs <= base.Runtime.OpenFDs && now.Runtime.Children == base.Runtime.Children
	}, 10*time.Second, 50*time.Millisecond, "goroutines, fds and children back to %+v", base.Runtime)
}

// TestFault_BashKilledFromOutsideMidCommand kills the shell the way the
// OOM killer or a stray `kill` would: from outside, while a command runs.
func TestFault_BashKilledFromOutsideMidCommand(t *testing.T) {
	for _, tc := range []struct{ name, command string }{
		// The terminal hangs up on sleep when bash dies.
		{"command ends with bash", "sleep 30"},
		// This one outlives bash and holds the terminal open (as a
		// nohup'd job would, it is left running).
		{"command ignores the hang-up", "(trap '' HUP; echo $BASHPID >../survivor.pid; exec sleep 30)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, startOpts{})
			ctx := ctxT(t)
			t.Cleanup(func() {
				if b, err := os.ReadFile(filepath.Join(s.WorkDir, "survivor.pid")); err == nil {
					if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			_, err := s.Client.Run(ctx, "mkdir -p kept && cd kept", client.RunOptions{})
			require.NoError(t, err)
			obs, err := s.Client.Run(ctx, tc.command, client.RunOptions{Timeout: time.Second})
			require.NoError(t, err)
			require.Equal(t, -1, obs.Metadata.ExitCode, "the hard timeout returned with the command still running")

			sess, err := s.Client.GetSession(ctx, "default")
			require.NoError(t, err)
			bash := sess.PID
			// Only ever signal the shell of the server this test started.
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", bash))
			require.NoError(t, err)
			fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			require.Equal(t, strconv.Itoa(s.cmd.Process.Pid), fields[1], "pid %d is the server's child", bash)
			require.Contains(t, string(stat), "(bash)")
			require.NoError(t, syscall.Kill(bash, syscall.SIGKILL))

			// Once the kernel has removed it, the next action must know.
			require.Eventually(t, func() bool {
				return errors.Is(syscall.Kill(bash, 0), syscall.ESRCH)
			}, 10*time.Second, time.Millisecond, "bash %d is gone", bash)

			kept := filepath.Join(s.WorkDir, "kept")
			out, err := s.Client.Run(ctx, "echo ok", client.RunOptions{Timeout: 10 * time.Second})
			require.NoError(t, err)
			assert.Equal(t, "ok", out.Content)
			assert.Equal(t, "[The previous shell exited (status 137), so a new shell was started in "+kept+
				". Variables, functions and aliases set in the old shell are gone.]\n", out.Metadata.Prefix)
			assert.Equal(t, 0, out.Metadata.ExitCode)
			require.NotNil(t, out.Metadata.WorkingDir)
			assert.Equal(t, kept, *out.Metadata.WorkingDir, "the last working directory is kept")

			sess, err = s.Client.GetSession(ctx, "default")
			require.NoError(t, err)
			assert.NotEqual(t, bash, sess.PID, "a new shell")
			again, err := s.Client.Run(ctx, "echo again", client.RunOptions{})
			require.NoError(t, err)
			assert.Equal(t, "again", again.Content)
			assert.Empty(t, again.Metadata.Prefix, "the restart is reported once")
		})
	}
}

// TestFault_DescriptorLimitRefusesNewSessions lowers the server's
// RLIMIT_NOFILE, so opening a terminal fails with EMFILE. Running out of
// pseudo-terminals themselves is TestFault_OutOfPTYsRefusesNewSessions.
func TestFault_DescriptorLimitRefusesNewSessions(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	info, err := s.Client.ServerInfo(ctx)
	require.NoError(t, err)
	// Leave room for a few connections and files, not for many terminals.
	limit := uint64(info.Runtime.OpenFDs + 24)
	var old unix.Rlimit
	require.NoError(t, unix.Prlimit(s.cmd.Process.Pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: limit}, &old))

	var created []string
	var failure error
	for i := range 40 {
		sess, err := s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: fmt.Sprintf("s%d", i)})
		if err != nil {
			failure = err
			break
		}
		created = append(created, sess.ID)
	}
	require.Error(t, failure, "a low descriptor limit must stop new sessions at some point")
	var apiErr *client.Error
	require.ErrorAs(t, failure, &apiErr)
	assert.GreaterOrEqual(t, apiErr.StatusCode, 500)
	assert.Contains(t, strings.ToLower(apiErr.Detail), "too many open files")

	// The sessions that exist, the default one included, keep working.
	obs, err := s.Client.Run(ctx, "echo still-here", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "still-here", obs.Content)
	for _, id := range created {
		require.NoError(t, s.Client.DeleteSession(ctx, id))
	}
	_, err = s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: "after"})
	assert.NoError(t, err, "freed descriptors can be used again")
}

// TestFault_OutOfPTYsRefusesNewSessions runs the server with a private
// devpts instance that holds only a few terminals, so a new session finds
// none left (ENOSPC from /dev/ptmx), as on a machine whose terminals are all
// taken.
func TestFault_OutOfPTYsRefusesNewSessions(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting a private devpts instance needs root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	const maxPTYs = 4
	// A new mount namespace, so the small instance is the server's alone;
	// /dev/ptmx must be the new instance's, or terminals come from the
	// machine's.
	mountPTS := fmt.Sprintf("mount -t devpts -o newinstance,ptmxmode=0666,max=%d devpts /dev/pts && "+
		`mount --bind /dev/pts/ptmx /dev/ptmx && exec "$@"`, maxPTYs)
	s := startServer(t, startOpts{wrap: []string{"unshare", "--mount", "--propagation", "private", "sh", "-c", mountPTS, "sh"}})
	ctx := ctxT(t)

	var created []string
	var failure error
	for i := range maxPTYs + 2 {
		sess, err := s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: fmt.Sprintf("s%d", i)})
		if err != nil {
			failure = err
			break
		}
		created = append(created, sess.ID)
	}
	require.Error(t, failure, "only %d terminals exist", maxPTYs)
	assert.Len(t, created, maxPTYs-1, "every terminal but the default session's is used before the refusal")
	var apiErr *client.Error
	require.ErrorAs(t, failure, &apiErr)
	assert.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
	assert.Contains(t, apiErr.Detail, "no pseudo-terminal available")

	// The server is still up and its sessions keep working.
	select {
	case <-s.exited:
		t.Fatalf("the server exited:\n%s", s.logs.String())
	default:
	}
	obs, err := s.Client.Run(ctx, "echo still-here", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "still-here", obs.Content)
	for _, id := range created {
		cmd, err := s.Client.StartCommand(ctx, id, "echo in-"+id)
		require.NoError(t, err)
		done := waitDone(t, s.Client, id, cmd.ID)
		require.NotNil(t, done.ExitCode)
		assert.Equal(t, 0, *done.ExitCode)
	}

	// A deleted session gives its terminal back.
	require.NoError(t, s.Client.DeleteSession(ctx, created[0]))
	_, err = s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: "after"})
	assert.NoError(t, err, "the freed terminal is used again")
	_, err = s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: "one-too-many"})
	assert.ErrorAs(t, err, &apiErr, "and the limit holds again")
}

func TestFault_ForkBombOfBackgroundChildrenIsReapedAsPID1(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("a new PID namespace needs root")
	}
	port := freePort(t)
	ws := t.TempDir()
	cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc",
		filepath.Join(binDir, "action-server"), fmt.Sprint(port), "--host", "127.0.0.1", "--working-dir", ws, "--no-enable-browser")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	c := client.New(fmt.Sprintf("http://127.0.0.1:%d", port))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, c.WaitUntilAlive(ctx))
	obs, err := c.Run(ctx, "for i in $(seq 1000); do (sleep 0.2 &) ; done; echo forked", client.RunOptions{Timeout: 50 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, "forked", obs.Content)
	// Orphans are re-parented to the server, which reaps them: no zombie
	// stays in the namespace.
	assert.Eventually(t, func() bool {
		out, err := c.Run(ctx, "ps -eo stat= | grep -c '^Z' || true", client.RunOptions{})
		return err == nil && strings.TrimSpace(out.Content) == "0"
	}, 20*time.Second, 200*time.Millisecond)
}
