package shell

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestForeground_NamesTheRunningJobsGroup(t *testing.T) {
	s := newSession(t, nil)
	_, err := s.Foreground()
	require.ErrorIs(t, err, ErrNotRunning, "idle: nothing to name")

	cases := []struct {
		name    string
		command string
		ownJob  bool // a program forked for the job, not the shell itself
	}{
		{"a program", "sleep 60", true},
		{"a pipeline", "sleep 60 | cat", true},
		{"a loop of builtins", "while true; do :; done", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := s.Start(context.Background(), tc.command)
			require.NoError(t, err)
			if tc.ownJob {
				// bash forks the job after the start marker, and the child
				// is bash until it execs: wait for sleep itself rather than
				// guess how long that takes.
				var pgrp int
				require.Eventually(t, func() bool {
					pgrp, err = s.Foreground()
					if err != nil || pgrp == 0 {
						return false
					}
					stat, err := os.ReadFile("/proc/" + strconv.Itoa(pgrp) + "/stat")
					return err == nil && strings.Contains(string(stat), "(sleep)")
				}, 10*time.Second, 5*time.Millisecond)
				assert.NotEqual(t, s.PID(), pgrp, "never the shell's own group")
			} else {
				// The loop runs in bash itself, which keeps the foreground.
				pgrp, err := s.Foreground()
				require.NoError(t, err)
				assert.Zero(t, pgrp, "the shell's own group reads as 0")
			}
			require.NoError(t, s.Key("C-c"))
			select {
			case <-c.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("Ctrl-C did not end the command")
			}
		})
	}
}
