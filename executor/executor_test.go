package executor

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/event"
	"github.com/actionserver/actionserver/shell"
	"github.com/actionserver/actionserver/shell/ohrun"
)

func newExecutor(t *testing.T) *Executor {
	t.Helper()
	e, err := New(context.Background(), Options{
		WorkDir: t.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()},
		Run:     ohrun.Options{NoChangeTimeout: 2 * time.Second},
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		e.Close(ctx)
	})
	return e
}

func runAction(command string, mod func(*event.CmdRun)) *event.CmdRun {
	a := event.NewCmdRun(command)
	if mod != nil {
		mod(a)
	}
	return a
}

func execute(t *testing.T, e *Executor, a event.Action) event.Observation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obs, err := e.Execute(ctx, a)
	require.NoError(t, err)
	return obs
}

func TestExecute_StaticCommandRunsInFreshShell(t *testing.T) {
	e := newExecutor(t)
	other := t.TempDir()
	execute(t, e, runAction("export ONLY_DEFAULT=1 && cd /", nil))

	obs := execute(t, e, runAction(`echo "$PWD [$ONLY_DEFAULT]"`, func(a *event.CmdRun) {
		a.IsStatic, a.Cwd = true, &other
	}))
	assert.Equal(t, other+" []", obs.(*event.CmdOutput).Content)
	assert.Equal(t, "/", e.cwd(context.Background()), "the default shell is untouched")

	obs = execute(t, e, runAction("pwd", func(a *event.CmdRun) { a.IsStatic = true }))
	assert.Equal(t, e.opts.WorkDir, obs.(*event.CmdOutput).Content, "without cwd: the workspace")
}

func TestExecute_RejectedCommands(t *testing.T) {
	e := newExecutor(t)
	obs := execute(t, e, runAction("ls\npwd", nil))
	require.IsType(t, &event.ErrorObservation{}, obs)
	assert.Contains(t, obs.Text(), "ERROR: Cannot execute multiple commands at once.")

	// The host adds "hidden" to whatever a hidden action returns, which
	// only the run observation accepts.
	obs = execute(t, e, runAction("ls\npwd", func(a *event.CmdRun) { a.Hidden = true }))
	out, ok := obs.(*event.CmdOutput)
	require.True(t, ok, "hidden actions always get a run observation")
	assert.True(t, out.Hidden)
	assert.Equal(t, -1, out.Metadata.ExitCode)
	assert.Contains(t, out.Content, "Cannot execute multiple commands at once")
}

func TestExecute_MetadataOfFinishedAndRunningCommands(t *testing.T) {
	e := newExecutor(t)
	out := execute(t, e, runAction("true", nil)).(*event.CmdOutput)
	require.NotNil(t, out.Metadata.WorkingDir)
	assert.Equal(t, e.opts.WorkDir, *out.Metadata.WorkingDir)
	require.NotNil(t, out.Metadata.PyInterpreterPath, "known, possibly empty")

	timeout := 0.2
	out = execute(t, e, runAction("sleep 1", func(a *event.CmdRun) { a.Timeout = &timeout })).(*event.CmdOutput)
	assert.Equal(t, event.DefaultCmdMetadata().ExitCode, out.Metadata.ExitCode)
	assert.Nil(t, out.Metadata.WorkingDir, "unknown while running")
	assert.Equal(t, "\n[The command timed out after 0.2 seconds. "+ohrun.TimeoutMessage+"]", out.Metadata.Suffix)
}

func TestExecute_IdleTimeResetsAtEachAction(t *testing.T) {
	e := newExecutor(t)
	time.Sleep(100 * time.Millisecond)
	before := e.IdleTime()
	execute(t, e, runAction("true", nil))
	assert.Less(t, e.IdleTime(), before)
	assert.Greater(t, e.Uptime(), e.IdleTime())
}

func TestExecute_UnsupportedActions(t *testing.T) {
	e := newExecutor(t)
	_, err := e.Execute(context.Background(), &event.IPythonRunCell{Code: "1"})
	require.EqualError(t, err, "JupyterRequirement not found. Unable to run IPython action.")
	obs := execute(t, e, &event.BrowseURL{URL: "http://127.0.0.1/"})
	assert.Equal(t, "Browser functionality is not supported or disabled.", obs.Text())
}

func TestStart_ActionsWaitForTheDefaultShell(t *testing.T) {
	home := t.TempDir()
	gate := home + "/gate"
	require.NoError(t, syscall.Mkfifo(gate, 0o600))
	// bash reads ~/.bashrc before its first prompt: it stays there until
	// the test writes to the FIFO.
	require.NoError(t, os.WriteFile(home+"/.bashrc", []byte(`read -r _ < "$HOME/gate"`+"\n"), 0o644))
	e := Start(context.Background(), Options{
		WorkDir: t.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home},
	})
	t.Cleanup(func() { e.Close(context.Background()) })

	ended, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, e.Ready(ended), context.Canceled, "bash is held in its rc file")

	type result struct {
		obs event.Observation
		err error
	}
	got := make(chan result, 1)
	go func() {
		obs, err := e.Execute(context.Background(), runAction("echo up", nil))
		got <- result{obs, err}
	}()
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("go\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	r := <-got
	require.NoError(t, r.err)
	assert.Equal(t, "up", r.obs.(*event.CmdOutput).Content)
	assert.NoError(t, e.Ready(context.Background()))
}

func TestStart_DefaultShellFailure(t *testing.T) {
	e := Start(context.Background(), Options{
		WorkDir: t.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH")},
		Shell:   shell.Options{Bash: "/nonexistent/bash"},
	})
	t.Cleanup(func() { e.Close(context.Background()) })
	err := e.Ready(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "start default shell")

	obs := execute(t, e, runAction("true", nil))
	assert.IsType(t, &event.ErrorObservation{}, obs, "no shell, no run: the agent is told why")
	assert.Contains(t, obs.Text(), "/nonexistent/bash")
	_, err = New(context.Background(), Options{WorkDir: t.TempDir(), Shell: shell.Options{Bash: "/nonexistent/bash"}})
	assert.Error(t, err, "New reports the failure")
}

func TestClose_WaitsForSessionsStillStarting(t *testing.T) {
	// A session whose shell hangs in its rc file is still starting when
	// the executor closes: Close must cut the start short and not return
	// before that shell is gone, and the start answers ErrClosed.
	home := t.TempDir()
	e := newExecutor(t)
	require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte("sleep 300\n"), 0o644))
	type result struct {
		s   *Session
		err error
	}
	res := make(chan result, 1)
	go func() {
		s, err := e.CreateSession(context.Background(), SessionOptions{ID: "slow", Env: map[string]string{"HOME": home}})
		res <- result{s, err}
	}()
	require.Eventually(t, func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.starting["slow"]
	}, 10*time.Second, time.Millisecond, "the session never began to start")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.Close(ctx)
	select {
	case r := <-res:
		require.Error(t, r.err)
		assert.ErrorIs(t, r.err, ErrClosed)
		assert.Equal(t, KindUnavailable, KindOf(r.err), "a request racing shutdown is not the server's fault")
	default:
		t.Fatal("Close returned while a session was still starting")
	}
}

func TestClose_RequestsAfterCloseAreUnavailable(t *testing.T) {
	e := newExecutor(t)
	e.Close(context.Background())
	_, err := e.CreateSession(context.Background(), SessionOptions{ID: "late"})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrClosed)
	assert.Equal(t, KindUnavailable, KindOf(err))
}

// TestRun_HangingStartupIsAnErrorObservationAndRetried: a ~/.bashrc that
// waits makes the default shell's start fail at its deadline; a run action
// gets an error observation that names the start-up files, the state says
// so, and once the file is mended the next action starts the shell.
func TestRun_HangingStartupIsAnErrorObservationAndRetried(t *testing.T) {
	home := t.TempDir()
	rc := home + "/.bashrc"
	require.NoError(t, os.WriteFile(rc, []byte("sleep 600\n"), 0o644))
	e := Start(context.Background(), Options{
		WorkDir: t.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home},
		Shell:   shell.Options{StartTimeout: time.Second},
	})
	t.Cleanup(func() { e.Close(context.Background()) })
	err := e.Ready(context.Background())
	require.ErrorIs(t, err, shell.ErrStartTimeout)
	st := e.ShellStatus()
	assert.Equal(t, ShellFailed, st.State)
	assert.Contains(t, st.Error, "~/.bashrc")

	for _, hidden := range []bool{false, true} {
		obs := execute(t, e, runAction("echo up", func(a *event.CmdRun) { a.Hidden = hidden }))
		assert.Contains(t, obs.Text(), "start-up files", "hidden=%v", hidden)
		if hidden {
			assert.IsType(t, &event.CmdOutput{}, obs, "the host needs a run observation for hidden actions")
		} else {
			assert.IsType(t, &event.ErrorObservation{}, obs)
		}
	}

	require.NoError(t, os.WriteFile(rc, []byte("true\n"), 0o644))
	obs := execute(t, e, runAction("echo up", nil))
	assert.Equal(t, "up", obs.(*event.CmdOutput).Content)
	assert.Equal(t, ShellStatus{State: ShellReady}, e.ShellStatus())
}
