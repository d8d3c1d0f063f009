package shell

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAll follows a command's output from offset 0 until it is done,
// waiting on Changed between reads, and returns every byte once.
func readAll(t *testing.T, c *Command, max int) []byte {
	t.Helper()
	var out []byte
	off := int64(0)
	deadline := time.After(time.Minute)
	for {
		changed := c.Changed()
		ch := c.Read(off, max)
		require.Zero(t, ch.Lost, "nothing may be dropped at this size")
		require.Equal(t, off, ch.Offset)
		out = append(out, ch.Data...)
		off = ch.Next
		if ch.Done {
			return out
		}
		if len(ch.Data) > 0 {
			continue
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("output did not finish")
		}
	}
}

// waitForeground waits until the terminal's foreground process group is
// led by a program named comm: bash has forked it, handed it the terminal
// and it has exec'd, so a signal now reaches that program and not a child
// still on its way to exec.
func waitForeground(t *testing.T, s *Session, comm string) {
	t.Helper()
	require.Eventually(t, func() bool {
		s.mu.Lock()
		p := s.proc
		s.mu.Unlock()
		if p == nil {
			return false
		}
		pgrp, err := foregroundPgrp(p.pty)
		if err != nil || pgrp <= 0 || pgrp == p.pid {
			return false
		}
		got, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pgrp))
		return err == nil && strings.TrimSpace(string(got)) == comm
	}, 10*time.Second, 5*time.Millisecond, "%s never became the foreground job", comm)
}

func TestStart_OutputByOffsetIsCompleteAndExactlyOnce(t *testing.T) {
	s := newSession(t, nil)
	c, err := s.Start(context.Background(), "seq 1 200000")
	require.NoError(t, err)
	got := readAll(t, c, 7777) // odd chunk size: offsets must still line up

	want, err := exec.Command("seq", "1", "200000").Output()
	require.NoError(t, err)
	assert.Equal(t, sha256.Sum256(bytes.TrimSuffix(want, []byte("\n"))), sha256.Sum256(bytes.TrimSuffix(got, []byte("\n"))))
	st := c.Status()
	assert.False(t, st.Running)
	assert.Equal(t, 0, st.Metadata.ExitCode)

	// Past the end reads as the end: a client asking for "what comes next"
	// with a huge offset still learns that the command is done.
	end := c.Read(1<<40, 10)
	assert.True(t, end.Done)
	assert.Equal(t, int64(len(got)), end.Next)
	assert.Empty(t, end.Data)
}

func TestStart_BusyAndLookup(t *testing.T) {
	s := newSession(t, nil)
	c, err := s.Start(context.Background(), "sleep 1; echo done")
	require.NoError(t, err)
	_, err = s.Start(context.Background(), "echo second")
	assert.ErrorIs(t, err, ErrBusy)
	running, ok := s.Running()
	require.True(t, ok)
	assert.Equal(t, c.ID, running.ID)
	got, ok := s.Command(c.ID)
	require.True(t, ok)
	assert.Same(t, c, got)
	<-c.Done()
	assert.Equal(t, "done\n", string(c.Read(0, -1).Data), "the stream keeps the output as printed")

	// The OpenHands path sees the same session.
	res := run(t, s, cmd("echo after"))
	assert.Equal(t, "after", res.Content)
}

func TestStart_TailShowsTheLineUnderTheCursor(t *testing.T) {
	s := newSession(t, nil)
	c, err := s.Start(context.Background(), `read -p "Name: " n; echo "hi $n"`)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return c.Read(0, -1).Tail == "Name: " }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, s.Input("Ann", true))
	<-c.Done()
	assert.Equal(t, "Name: Ann\nhi Ann\n", string(c.Read(0, -1).Data))
}

func TestStart_QuietLinesBecomeFinalPromptly(t *testing.T) {
	s := newSession(t, nil)
	c, err := s.Start(context.Background(), "echo first; sleep 5; echo second")
	require.NoError(t, err)
	// Without settling, "first" would wait for 100 more lines or the end.
	require.Eventually(t, func() bool { return string(c.Read(0, -1).Data) == "first\n" }, 3*time.Second, 20*time.Millisecond)
	require.NoError(t, s.Signal(syscall.SIGINT))
}

func TestSignal_EndsCommandNotSession(t *testing.T) {
	s := newSession(t, nil)
	run(t, s, cmd("mkdir -p here && cd here"))
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			c, err := s.Start(context.Background(), "sleep 60")
			require.NoError(t, err)
			waitForeground(t, s, "sleep")
			require.NoError(t, s.Signal(sig))
			select {
			case <-c.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("signal did not end the command")
			}
			st := c.Status()
			assert.False(t, st.Died, "the shell survives")
			assert.Equal(t, 128+int(sig), st.Metadata.ExitCode)
			assert.True(t, strings.HasSuffix(run(t, s, cmd("pwd")).Content, "/here"), "cwd kept")
		})
	}
	assert.ErrorIs(t, s.Signal(syscall.SIGINT), ErrNotRunning)
}

func TestSignal_InterruptsLoopInsideShell(t *testing.T) {
	s := newSession(t, nil)
	c, err := s.Start(context.Background(), "echo looping; while true; do :; done")
	require.NoError(t, err)
	// The loop is entered right after the builtin echo: once its line is
	// out, bash itself is busy and nothing else is in the foreground.
	require.Eventually(t, func() bool { return strings.Contains(string(c.Read(0, -1).Data), "looping\n") },
		10*time.Second, 10*time.Millisecond, "the loop never started")
	assert.Error(t, s.Signal(syscall.SIGTERM), "the loop runs in bash itself")
	require.NoError(t, s.Signal(syscall.SIGINT))
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGINT did not stop the loop")
	}
	assert.Equal(t, 130, c.Status().Metadata.ExitCode)
}

func TestResize_ChangesTerminalSize(t *testing.T) {
	s := newSession(t, nil)
	assert.Equal(t, "1000", run(t, s, cmd("tput cols")).Content)
	require.NoError(t, s.Resize(40, 132))
	assert.Equal(t, "132", run(t, s, cmd("tput cols")).Content)
	assert.Equal(t, "40", run(t, s, cmd("tput lines")).Content)
}

func TestKeyAndInput_NeedARunningCommand(t *testing.T) {
	s := newSession(t, nil)
	assert.ErrorIs(t, s.Input("x", true), ErrNotRunning)
	assert.ErrorIs(t, s.Key("C-c"), ErrNotRunning)
	c, err := s.Start(context.Background(), "cat")
	require.NoError(t, err)
	assert.ErrorIs(t, s.Key("C-9x"), ErrUnknownKey)
	require.NoError(t, s.Key("C-d"))
	<-c.Done()
}

func TestRun_JobNoticesStayWithTheirCommand(t *testing.T) {
	s := newSession(t, nil)
	res := run(t, s, cmd("sleep 0.1 &"))
	pid := res.Metadata.PID
	res = run(t, s, cmd("sleep 0.6; echo fg"))
	assert.Contains(t, res.Content, "fg")
	assert.Contains(t, res.Content, "[1]+  Done", "the notice comes before the prompt, so with this command")
	assert.NotContains(t, run(t, s, cmd("echo next")).Content, "Done")
	assert.Equal(t, strconv.Itoa(pid), fmt.Sprint(pid))
}

func TestRun_SyntaxErrorExitsWithTwo(t *testing.T) {
	s := newSession(t, nil)
	run(t, s, cmd("(exit 3)"))
	res := run(t, s, cmd("echo 'unclosed"))
	assert.Equal(t, 2, res.Metadata.ExitCode)
	run(t, s, cmd("(exit 3)"))
	res = run(t, s, cmd("if then fi"))
	assert.Equal(t, 2, res.Metadata.ExitCode)
	assert.Equal(t, "2", run(t, s, cmd("echo 'x\ny' >/dev/null; (exit 2); echo $?")).Content)
}

func TestHistory_ForgetsOldCommandsAndTheirOutput(t *testing.T) {
	s := newSession(t, nil)
	var first *Command
	for i := range historySize + 5 {
		c, err := s.Start(context.Background(), "echo "+strconv.Itoa(i))
		require.NoError(t, err)
		<-c.Done()
		if i == 0 {
			first = c
		}
	}
	_, ok := s.Command(first.ID)
	assert.False(t, ok, "beyond the history size")
	s.mu.Lock()
	assert.Len(t, s.history, historySize)
	s.mu.Unlock()
}

func TestHistory_EarlierOutputWithinOneOutputLimit(t *testing.T) {
	const limit = 64 << 10
	s := newSession(t, func(o *Options) { o.OutputLimit = limit })
	var cmds []*Command
	for i := range 4 {
		// Each prints 24 KiB: two fit in the budget of earlier output,
		// a third does not.
		c, err := s.Start(context.Background(), fmt.Sprintf("yes %d | head -c %d", i, 24<<10))
		require.NoError(t, err)
		<-c.Done()
		cmds = append(cmds, c)
	}
	// Once the fourth started, the second and third (48 KiB) were kept
	// and the first, which would make 72 KiB, was let go.
	kept := func(c *Command) bool {
		ch := c.Read(0, -1)
		return ch.Lost == 0 && len(ch.Data) > 0
	}
	assert.False(t, kept(cmds[0]), "the oldest output is released")
	assert.True(t, kept(cmds[1]))
	assert.True(t, kept(cmds[2]))
	assert.True(t, kept(cmds[3]), "the newest command's own output")
}
