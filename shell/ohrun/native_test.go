package ohrun

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitForeground waits until the terminal's foreground process group is
// led by a program named comm: bash has forked it, handed it the terminal
// and it has exec'd, so a signal now reaches that program and not a child
// still on its way to exec.
func waitForeground(t *testing.T, s *Session, comm string) {
	t.Helper()
	require.Eventually(t, func() bool {
		turn, err := s.Session.TryAcquire(context.Background())
		if err != nil {
			return false
		}
		defer turn.Release()
		pgrp, err := turn.Foreground()
		if err != nil || pgrp <= 0 || pgrp == turn.ShellPID() {
			return false
		}
		got, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pgrp))
		return err == nil && strings.TrimSpace(string(got)) == comm
	}, 10*time.Second, 5*time.Millisecond, "%s never became the foreground job", comm)
}

func TestRun_RefusedWhileAPersonsCommandRunsLeavesTheSessionUsable(t *testing.T) {
	s := newSession(t, nil)
	run(t, s, done("true", false)) // the prompt is up
	// A person attached to the terminal types a command that runs until
	// they end it (a timed one could end first on a loaded machine); bash
	// has read it well before the agent's command comes.
	require.NoError(t, s.WriteRaw([]byte("sleep 600\n")))
	waitForeground(t, s, "sleep")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := s.Run(ctx, done("echo refused", false))
	require.ErrorContains(t, err, "busy", "the agent's command must not run into the person's")

	// Once the person's command is over, the agent's runs: the refused
	// one must not count as running.
	require.NoError(t, s.WriteRaw([]byte{0x03}), "the person ends it with Ctrl-C")
	var res Result
	require.Eventually(t, func() bool {
		res, err = s.Run(ctx, done("echo ok", false))
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, "ok", res.Content, "%+v", res)
	assert.Equal(t, 0, res.Metadata.ExitCode)

	// The native API likewise.
	c, err := s.Start(ctx, "echo native")
	require.NoError(t, err)
	<-c.Done()
}

// TestRun_ACommandStartedByTheNativeAPIEndsTheViewOfTheLastOne: what the
// agent saw of a command it left running belongs to that command. Once
// another one was started beside the policy (the native API), a fetch of
// more output reports no command of its own, not the new one's output
// under the old one's offsets.
func TestRun_ACommandStartedByTheNativeAPIEndsTheViewOfTheLastOne(t *testing.T) {
	s := newSession(t, nil)
	res := run(t, s, Request{Command: "echo first; sleep 0.5", Timeout: 100 * time.Millisecond})
	require.False(t, res.Finished)
	// It finishes without the agent seeing it.
	c, ok := s.Running()
	require.True(t, ok)
	<-c.Done()

	native, err := s.Start(context.Background(), "echo native")
	require.NoError(t, err)
	<-native.Done()

	res = run(t, s, Request{Command: ""})
	assert.Equal(t, msgNoCommandForLogs, res.Content)
	assert.False(t, res.Finished)
}

// TestRun_AKeyNameWithNoKeyRunsAsACommand: "C-" and a character that is
// no control key is not sent as a key: bash runs it, as any command.
func TestRun_AKeyNameWithNoKeyRunsAsACommand(t *testing.T) {
	s := newSession(t, nil)
	res := run(t, s, done("C-1", false))
	assert.True(t, res.Finished)
	assert.Contains(t, res.Content, "command not found")
	assert.Equal(t, 127, res.Metadata.ExitCode)
	assert.Equal(t, "\n[The command completed with exit code 127. CTRL+1 was sent.]", res.Suffix)
}
