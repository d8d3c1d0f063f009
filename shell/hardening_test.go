package shell

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/proctest"
)

// TestRun_UnreadableCommandFileRunsNothingStale breaks the command file
// the ways an agent can (as the shell's user it finds it in $__as_f) and
// checks that the next command fails with a clear message instead of
// running the previous command again, and that the one after it runs.
func TestRun_UnreadableCommandFileRunsNothingStale(t *testing.T) {
	cases := []struct {
		name     string
		break_   string // run after the counter is bumped
		needUser bool   // permissions do not stop root
	}{
		{"swapped for a directory", `mv "$__as_f" "$__as_f.old" && mkdir "$__as_f"`, false},
		{"swapped for an old copy", `cp "$__as_f" "$__as_f.old" && mv "$__as_f" "$__as_f.cur" && mv "$__as_f.old" "$__as_f"`, false},
		{"made unreadable", `chmod 000 "$__as_f"`, true},
		{"directory made unsearchable", `chmod 000 "${__as_f%/*}"`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needUser && os.Geteuid() == 0 {
				t.Skip("root reads files whatever their mode")
			}
			s := newSession(t, nil)
			counter := filepath.Join(t.TempDir(), "counter")
			res := run(t, s, done("echo x >>"+counter+"; "+tc.break_, false))
			require.Equal(t, 0, res.Metadata.ExitCode, res.Content)

			res = run(t, s, done("echo second", false))
			assert.Contains(t, res.Content, staleMessage)
			assert.NotContains(t, res.Content, "second")
			assert.Equal(t, 1, res.Metadata.ExitCode, "a command that did not run fails")
			data, err := os.ReadFile(counter)
			require.NoError(t, err)
			assert.Equal(t, "x\n", string(data), "the previous command ran once only")

			res = run(t, s, done("echo third", false))
			assert.Equal(t, "third", res.Content, "the server mends the file for the next command")
			assert.Equal(t, 0, res.Metadata.ExitCode)
		})
	}
}

// TestCommandFile_NeverWritesThroughALink plants links where the command
// file is re-created and checks that their targets stay untouched.
func TestCommandFile_NeverWritesThroughALink(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o600))

	t.Run("a link at the file's path", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "sess")
		c := &cmdFile{path: filepath.Join(dir, "command"), dir: dir, gid: -1, nonce: "n"}
		require.NoError(t, c.ensureDir())
		require.NoError(t, os.Symlink(victim, c.path))
		require.NoError(t, c.write("echo hi"))
		defer c.close()
		fi, err := os.Lstat(c.path)
		require.NoError(t, err)
		assert.True(t, fi.Mode().IsRegular(), "the link was replaced by a file")
		data, err := os.ReadFile(c.path)
		require.NoError(t, err)
		assert.Equal(t, "n00000000000000000001\necho hi", string(data))
	})
	t.Run("a link where the directory was", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "sess")
		require.NoError(t, os.Symlink(filepath.Dir(victim), dir))
		c := &cmdFile{path: filepath.Join(dir, "victim"), dir: dir, gid: -1, nonce: "n"}
		err := c.write("echo hi")
		assert.ErrorContains(t, err, "replaced")
	})
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(data))
}

// TestSession_DirectoryIsTheServers checks that the session directory and
// command file of a shell run as another user belong to the server, which
// the shell's user cannot plant links in, and that the user can read them.
func TestSession_DirectoryIsTheServers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a shell as another user needs root")
	}
	const uid, gid = 65534, 65534 // nobody
	tmp := t.TempDir()
	require.NoError(t, os.Chmod(tmp, 0o1777))
	work := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(work), 0o755))
	require.NoError(t, os.Chmod(work, 0o777))
	s := newSession(t, func(o *Options) {
		o.TempDir = tmp
		o.Dir = work
		o.Credential = &syscall.Credential{Uid: uid, Gid: gid}
	})
	res := run(t, s, done(`echo "$(id -u) ${__as_f%/*}"`, false))
	require.Equal(t, 0, res.Metadata.ExitCode, res.Content)
	fields := strings.Fields(res.Content)
	require.Len(t, fields, 2, res.Content)
	assert.Equal(t, "65534", fields[0])
	fi, err := os.Lstat(fields[1])
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, uint32(0), st.Uid, "the server owns the session directory")
	assert.Equal(t, uint32(gid), st.Gid, "the shell's user reads it through its group")
	assert.Equal(t, os.FileMode(0o750), fi.Mode().Perm())

	res = run(t, s, done(`ln -s /etc/passwd "$__as_f.x" && echo planted`, false))
	assert.NotContains(t, res.Content, "planted")
	assert.Contains(t, res.Content, "Permission denied")
}

// TestStart_HangingRcFileFailsAtTheDeadline gives bash a ~/.bashrc that
// waits, as one waiting on a stale lock does: the start fails at the
// deadline with an error that names the start-up files and shows what
// they printed, nothing of that bash is left, and a later start succeeds.
func TestStart_HangingRcFileFailsAtTheDeadline(t *testing.T) {
	home := t.TempDir()
	pidFile := filepath.Join(home, "sleeper.pid")
	rc := filepath.Join(home, ".bashrc")
	require.NoError(t, os.WriteFile(rc, []byte(
		"echo waiting for the lock\nsleep 600 &\necho $! >"+pidFile+"\nwait\n"), 0o644))
	opts := Options{
		Dir:          t.TempDir(),
		Env:          []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8"},
		StartTimeout: time.Second,
	}
	_, err := Start(context.Background(), opts)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrStartTimeout)
	assert.Contains(t, err.Error(), "~/.bashrc")
	assert.Contains(t, err.Error(), "waiting for the lock")

	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return proctest.Exited(pid) }, 10*time.Second, 10*time.Millisecond,
		"what the rc file started was ended")

	require.NoError(t, os.WriteFile(rc, []byte("echo fixed\n"), 0o644))
	s, err := Start(context.Background(), opts)
	require.NoError(t, err, "a later start succeeds")
	closeSession(s)
}

// TestPipe_OrphansEndWithTheSession: processes a piped command left
// running used to outlive its session. Now they end with it, those that
// ignore SIGTERM included.
func TestPipe_OrphansEndWithTheSession(t *testing.T) {
	s := newSession(t, nil)
	file := filepath.Join(t.TempDir(), "pids")
	c, err := s.StartPipe(context.Background(), proctest.OrphanScript(file), PipeOptions{})
	require.NoError(t, err)
	waitDone(t, c)
	pids := proctest.ReadPIDs(t, file, 2)
	proctest.KillLeftovers(t, &pids)
	for _, pid := range pids {
		require.False(t, proctest.Exited(pid), "pid %d runs on after its command", pid)
	}
	// Another piped command keeps running till the end too.
	c2, err := s.StartPipe(context.Background(), "exec sleep 1003", PipeOptions{})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	s.Close(ctx)
	waitDone(t, c2)
	for _, pid := range pids {
		assert.Eventually(t, func() bool { return proctest.Exited(pid) }, 10*time.Second, 10*time.Millisecond, "pid %d ended", pid)
	}
}

// TestPipe_RunningAtOnceAreCapped: piped commands were unbounded per
// session. Past Options.MaxPipes they are refused until one ends.
func TestPipe_RunningAtOnceAreCapped(t *testing.T) {
	s := newSession(t, func(o *Options) { o.MaxPipes = 2 })
	var cmds []*Command
	for range 2 {
		c, err := s.StartPipe(context.Background(), "exec sleep 1000", PipeOptions{})
		require.NoError(t, err)
		cmds = append(cmds, c)
	}
	_, err := s.StartPipe(context.Background(), "echo one too many", PipeOptions{})
	require.ErrorIs(t, err, ErrTooManyPipes)

	require.NoError(t, s.SignalPipe(cmds[0].ID, syscall.SIGKILL))
	waitDone(t, cmds[0])
	c, err := s.StartPipe(context.Background(), "echo room again", PipeOptions{})
	require.NoError(t, err, "an ended command frees its place")
	waitDone(t, c)
}

// TestCgroups_SetsidEscapeesEndWithTheSession: a process that calls setsid
// leaves the terminal session and the process group that a session
// otherwise ends, and one that job control moved leaves a piped command's
// group; in a cgroup of the session's own they end all the same.
func TestCgroups_SetsidEscapeesEndWithTheSession(t *testing.T) {
	cgs, err := NewCgroups()
	if err != nil {
		t.Skipf("no cgroup v2 to manage here: %v", err)
	}
	t.Cleanup(func() { assert.NoError(t, cgs.Close(), "the sessions' cgroups are removed") })
	s, err := Start(context.Background(), Options{Dir: t.TempDir(), Cgroups: cgs,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8"}})
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "pids")
	// setsid forks when it leads a group already: the process writes its
	// own pid.
	escape := func(secs string) string {
		return `setsid bash -c 'echo $$ >>` + file + `; exec sleep ` + secs + `' &`
	}
	res := run(t, s, done(escape("1000"), false))
	require.Equal(t, 0, res.Metadata.ExitCode, res.Content)
	c, err := s.StartPipe(context.Background(), escape("1001")+"\nset -m; sleep 1002 & echo $! >>"+file, PipeOptions{})
	require.NoError(t, err)
	waitDone(t, c)
	pids := proctest.ReadPIDs(t, file, 3)
	proctest.KillLeftovers(t, &pids)

	closeSession(s)
	for _, pid := range pids {
		assert.Eventually(t, func() bool { return proctest.Exited(pid) }, 10*time.Second, 10*time.Millisecond, "pid %d ended", pid)
	}
}

// TestCgroups_AStartThatTheCgroupRefusesRunsWithout: a cgroup removed
// under the session (or a seccomp filter that refuses clone3) must not
// keep commands from starting.
func TestCgroups_AStartThatTheCgroupRefusesRunsWithout(t *testing.T) {
	cgs, err := NewCgroups()
	if err != nil {
		t.Skipf("no cgroup v2 to manage here: %v", err)
	}
	t.Cleanup(func() { assert.NoError(t, cgs.Close()) })
	s, err := Start(context.Background(), Options{Dir: t.TempDir(), Cgroups: cgs,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8"}})
	require.NoError(t, err)
	t.Cleanup(func() { closeSession(s) })
	// The session's bash is in it; a second one made for it is gone.
	g, err := cgs.newSession()
	require.NoError(t, err)
	require.NoError(t, os.Remove(g.path))
	t.Cleanup(func() { syscall.Close(g.fd) })
	own := s.cg
	s.cg = g
	c, err := s.StartPipe(context.Background(), "echo still runs", PipeOptions{})
	s.cg = own
	require.NoError(t, err)
	waitDone(t, c)
	assert.Equal(t, "still runs\n", string(c.Read(0, -1).Data))
}

// TestRestart_SessionAnswersWhileTheNewShellStarts: a dead bash is
// replaced at the next request, and the new one may wait in its start-up
// files until the deadline. Meanwhile the session still says where it
// is (Cwd, which every file action asks), and closing it ends the start.
func TestRestart_SessionAnswersWhileTheNewShellStarts(t *testing.T) {
	home := t.TempDir()
	hang, started := filepath.Join(home, "hang"), filepath.Join(home, "restarting")
	require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte(
		`if [ -e "$HOME/hang" ]; then touch "$HOME/restarting"; sleep 600; fi`+"\n"), 0o644))
	s := newSession(t, func(o *Options) {
		o.Env = append(o.Env, "HOME="+home)
		o.StartTimeout = 10 * time.Minute
	})
	dir := s.Cwd()

	require.NoError(t, os.WriteFile(hang, nil, 0o644))
	c, err := s.Start(context.Background(), "exit 3")
	require.NoError(t, err)
	<-c.Done()

	restarted := make(chan error, 1)
	go func() {
		_, err := s.Start(context.Background(), "echo never")
		restarted <- err
	}()
	require.Eventually(t, func() bool { _, err := os.Stat(started); return err == nil }, time.Minute, 10*time.Millisecond,
		"the new shell reads its start-up files")

	cwd := make(chan string, 1)
	go func() { cwd <- s.Cwd() }()
	select {
	case got := <-cwd:
		assert.Equal(t, dir, got)
	case <-time.After(30 * time.Second):
		t.Fatal("Cwd waited for the restart")
	}
	assert.Zero(t, s.PID(), "no shell while the new one starts")
	require.NoError(t, s.Resize(40, 100), "kept for the new shell")

	closeSession(s)
	select {
	case err := <-restarted:
		assert.ErrorIs(t, err, ErrClosed)
	case <-time.After(time.Minute):
		t.Fatal("Close did not end the restart")
	}
}
