package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/shell"
)

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// readAll follows a command's output to its end, as a long-polling client
// would, and returns all of it with the last chunk.
func readAll(t *testing.T, c *Command) (string, OutputChunk) {
	t.Helper()
	var out strings.Builder
	off := int64(0)
	for {
		ch, err := c.Output(ctxT(t), off, MaxOutputChunk, 10*time.Second)
		require.NoError(t, err)
		out.WriteString(ch.Data)
		off = ch.NextOffset
		if ch.Done {
			return out.String(), ch
		}
	}
}

func TestSession_CommandRunsToItsExitCode(t *testing.T) {
	e := newExecutor(t)
	cwd := t.TempDir()
	sess, err := e.CreateSession(ctxT(t), SessionOptions{ID: "w", Cwd: cwd, Env: map[string]string{"MARK": "m1"}})
	require.NoError(t, err)
	assert.Equal(t, "w", sess.ID())
	assert.Equal(t, cwd, sess.Info().Cwd)

	cmd, err := sess.Start(ctxT(t), `echo "$PWD $MARK"; exit_with() { return $1; }; exit_with 3`)
	require.NoError(t, err)
	out, last := readAll(t, cmd)
	assert.Equal(t, cwd+" m1\n", out)
	require.NotNil(t, last.ExitCode)
	assert.Equal(t, 3, *last.ExitCode)

	info := cmd.Info()
	assert.Equal(t, "w", info.Session)
	assert.False(t, info.Running)
	require.NotNil(t, info.Metadata)
	assert.Equal(t, 3, info.Metadata.ExitCode)
	assert.Equal(t, cwd, info.Metadata.WorkingDir)
	assert.Equal(t, int64(len(out)), info.Output.End)

	again, ok := sess.Command(cmd.ID())
	require.True(t, ok, "the session remembers the command")
	assert.Equal(t, info, again.Info())
	_, ok = sess.Command(cmd.ID() + 100)
	assert.False(t, ok)
}

func TestSession_SignalStopsTheCommandNotTheShell(t *testing.T) {
	e := newExecutor(t)
	sess, err := e.CreateSession(ctxT(t), SessionOptions{})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(sess.ID(), "s-"), "an id is picked: %s", sess.ID())

	cmd, err := sess.Start(ctxT(t), "echo started; sleep 60")
	require.NoError(t, err)
	ch, err := cmd.Output(ctxT(t), 0, MaxOutputChunk, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, "started\n", ch.Data)
	running := sess.Info().RunningCommand
	require.NotNil(t, running)
	assert.Equal(t, cmd.ID(), running.ID)

	require.NoError(t, sess.Signal("term"))
	_, last := readAll(t, cmd)
	assert.Equal(t, 143, *last.ExitCode)
	assert.False(t, cmd.Info().ShellDied)
	assert.Nil(t, sess.Info().RunningCommand)

	cmd, err = sess.Start(ctxT(t), "echo alive")
	require.NoError(t, err)
	out, _ := readAll(t, cmd)
	assert.Equal(t, "alive\n", out)
}

func TestSession_InputReachesTheRunningCommand(t *testing.T) {
	e := newExecutor(t)
	sess, err := e.CreateSession(ctxT(t), SessionOptions{})
	require.NoError(t, err)
	cmd, err := sess.Start(ctxT(t), "read -r line; echo got $line")
	require.NoError(t, err)
	require.NoError(t, sess.Input("hello", true))
	out, _ := readAll(t, cmd)
	assert.Contains(t, out, "got hello")
}

// TestSession_Errors checks each refusal's sentinel, kind and text: the
// kind is what the HTTP server answers by, the text what the client reads.
func TestSession_Errors(t *testing.T) {
	e := newExecutor(t)
	sess, err := e.CreateSession(ctxT(t), SessionOptions{ID: "busy"})
	require.NoError(t, err)
	_, err = sess.Start(ctxT(t), "sleep 60")
	require.NoError(t, err)
	idle, err := e.CreateSession(ctxT(t), SessionOptions{ID: "idle"})
	require.NoError(t, err)

	tests := []struct {
		name     string
		do       func() error
		sentinel error
		kind     Kind
		text     string
	}{
		{"bad id", func() error { _, err := e.CreateSession(ctxT(t), SessionOptions{ID: "a b"}); return err },
			ErrBadSessionID, KindInvalid, "a session id is 1 to 64 letters, digits, '.', '_' or '-', and not '.' or '..'"},
		{"id taken", func() error { _, err := e.CreateSession(ctxT(t), SessionOptions{ID: "busy"}); return err },
			ErrSessionExists, KindConflict, "a session with this id exists"},
		{"delete default", func() error { return e.DeleteSession(ctxT(t), DefaultSession) },
			ErrDefaultSession, KindInvalid, "the default session serves run actions and cannot be deleted"},
		{"delete unknown", func() error { return e.DeleteSession(ctxT(t), "nope") },
			ErrSessionNotFound, KindNotFound, "session nope not found"},
		{"empty command", func() error { _, err := idle.Start(ctxT(t), " \n"); return err },
			ErrEmptyCommand, KindInvalid, "command must not be empty"},
		{"busy", func() error { _, err := sess.Start(ctxT(t), "echo x"); return err },
			ErrBusy, KindConflict, "a command is already running in this session"},
		{"input, nothing running", func() error { return idle.Input("x", true) },
			ErrNotRunning, KindConflict, "no command is running in this session"},
		{"unknown key", func() error { return sess.Key("C-nope") },
			ErrUnknownKey, KindInvalid, "unknown key name"},
		{"unknown signal", func() error { return sess.Signal("SIGHUP") },
			ErrUnknownSignal, KindInvalid, "signal must be SIGINT, SIGTERM or SIGKILL"},
		{"zero size", func() error { return sess.Resize(0, 80) },
			ErrBadSize, KindInvalid, "rows and cols must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.sentinel)
			assert.Equal(t, tt.kind, KindOf(err))
			assert.Equal(t, tt.text, err.Error())
		})
	}
}

func TestSession_DeleteEndsItsCommands(t *testing.T) {
	e := newExecutor(t)
	sess, err := e.CreateSession(ctxT(t), SessionOptions{ID: "gone"})
	require.NoError(t, err)
	cmd, err := sess.Start(ctxT(t), "sleep 60")
	require.NoError(t, err)

	require.NoError(t, sess.Delete(ctxT(t)))
	_, last := readAll(t, cmd)
	assert.True(t, last.Done)
	_, err = e.Session(ctxT(t), "gone")
	assert.ErrorIs(t, err, ErrSessionNotFound)
	ids := []string{}
	for _, s := range e.Sessions(ctxT(t)) {
		ids = append(ids, s.ID())
	}
	assert.Equal(t, []string{DefaultSession}, ids)
}

func TestSession_AttachedTerminalTypesAndSees(t *testing.T) {
	e := newExecutor(t)
	sess, err := e.CreateSession(ctxT(t), SessionOptions{})
	require.NoError(t, err)
	term, err := sess.Attach()
	require.NoError(t, err)
	defer term.Close()

	require.NoError(t, term.Write([]byte("echo $((40+2))-attached\n")))
	var seen strings.Builder
	for !strings.Contains(seen.String(), "42-attached") {
		select {
		case b, ok := <-term.Output():
			require.True(t, ok, "the output ended early: %q", seen.String())
			seen.Write(b)
		case <-ctxT(t).Done():
			t.Fatalf("no answer on the terminal: %q", seen.String())
		}
	}
	assert.False(t, term.Dropped())
}

func TestWatch_EventsAndRefusals(t *testing.T) {
	e := newExecutor(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(ctxT(t))
	events, err := e.Watch(ctx, dir, false)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "new.txt"), nil, 0o644))
	ev := <-events
	assert.Equal(t, WatchEvent{Path: filepath.Join(dir, "new.txt"), Op: WatchCreate, Time: ev.Time}, ev)
	cancel()
	for range events {
	}

	_, err = e.Watch(ctxT(t), filepath.Join(dir, "missing"), false)
	assert.ErrorIs(t, err, ErrWatchNotFound)
	assert.Equal(t, KindNotFound, KindOf(err))
	_, err = e.Watch(ctxT(t), filepath.Join(dir, "new.txt"), false)
	assert.ErrorIs(t, err, ErrCannotWatch)
	assert.Equal(t, KindInvalid, KindOf(err))
}

func TestTransfer_RefusalsHaveKinds(t *testing.T) {
	e := newExecutor(t)
	err := e.Upload(ctxT(t), "a.txt", strings.NewReader("x"), "relative", false)
	assert.ErrorIs(t, err, ErrBadTransfer)
	assert.Equal(t, KindInvalid, KindOf(err))
	assert.Equal(t, "Destination must be an absolute path", err.Error())

	_, err = e.PrepareDownload(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, ErrFileNotFound)
	assert.Equal(t, KindNotFound, KindOf(err))
}

func TestPluginStatuses_NoneIsAnEmptyList(t *testing.T) {
	e := newExecutor(t)
	assert.Equal(t, []PluginStatus{}, e.PluginStatuses())
	assert.Nil(t, e.VSCodeToken())
}

func TestValidSessionID(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"a", true},
		{"build-1.2_x", true},
		{strings.Repeat("z", 64), true},
		{strings.Repeat("z", 65), false},
		{"", false},
		{"a b", false},
		{"a/b", false},
		{"é", false},
		{"a\n", false},
		{".", false},
		{"..", false},
		{"...", true},
		{".a", true},
	} {
		assert.Equal(t, tc.ok, validSessionID(tc.id), "%q", tc.id)
	}
}

// TestSession_DefaultThatFailedToStartSaysWhy: asking for the default
// session when its shell could not start gives the start's error, not
// "not found", so a front end can tell the client why.
func TestSession_DefaultThatFailedToStartSaysWhy(t *testing.T) {
	e := Start(context.Background(), Options{
		WorkDir: t.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH")},
		Shell:   shell.Options{Bash: "/nonexistent/bash"},
	})
	t.Cleanup(func() { e.Close(context.Background()) })
	require.Error(t, e.Ready(ctxT(t)))

	sess, err := e.Session(ctxT(t), DefaultSession)
	require.Error(t, err)
	assert.Nil(t, sess)
	assert.NotErrorIs(t, err, ErrSessionNotFound)
	assert.Contains(t, err.Error(), "/nonexistent/bash")

	_, err = e.Session(ctxT(t), "never-made")
	assert.ErrorIs(t, err, ErrSessionNotFound)
	assert.Equal(t, KindNotFound, KindOf(err))
}
