package executor

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/event"
	"github.com/actionserver/actionserver/shell"
)

func newExecutor(t *testing.T) *Executor {
	t.Helper()
	e, err := New(context.Background(), Options{
		WorkDir: t.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()},
		Shell:   shell.Options{NoChangeTimeout: 2 * time.Second},
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
	assert.Equal(t, "/", e.Cwd(), "the default shell is untouched")

	obs = execute(t, e, runAction("pwd", func(a *event.CmdRun) { a.IsStatic = true }))
	assert.Equal(t, e.opts.WorkDir, obs.(*event.CmdOutput).Content, "without cwd: the workspace")
}

func TestExecute_RejectedCommands(t *testing.T) {
	e := newExecutor(t)
	obs := execute(t, e, runAction("ls\npwd", nil))
	require.IsType(t, &event.Error{}, obs)
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
	assert.Equal(t, "\n[The command timed out after 0.2 seconds. "+shell.TimeoutMessage+"]", out.Metadata.Suffix)
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
