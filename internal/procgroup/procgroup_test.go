package procgroup

import (
	"context"
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

// startWithHelper starts a shell that forks a helper into its own group
// and prints the helper's pid; trapTerm makes the leader ignore SIGTERM.
func startWithHelper(t *testing.T, trapTerm bool) (*Group, int) {
	t.Helper()
	script := `sleep 300 & echo $!; `
	if trapTerm {
		script = `trap '' TERM; ` + script
	}
	script += `while :; do sleep 1; done`
	cmd := exec.Command("bash", "-c", script)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	g, err := Start(cmd)
	require.NoError(t, err)
	t.Cleanup(func() { _ = Kill(g.Pid(), syscall.SIGKILL); <-g.Exited() })
	buf := make([]byte, 32)
	n, err := out.Read(buf)
	require.NoError(t, err)
	helper, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	require.NoError(t, err)
	return g, helper
}

func processGone(pid int) bool {
	// A zombie still answers kill(0); its state in /proc says it is dead.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

func TestStart_LeadsAGroupThatDiesWithItsParent(t *testing.T) {
	g, helper := startWithHelper(t, false)
	pgid, err := syscall.Getpgid(helper)
	require.NoError(t, err)
	assert.Equal(t, g.Pid(), pgid, "the helper is in the leader's group")
	assert.NotEqual(t, syscall.Getpgrp(), pgid, "not in the server's group")
	assert.Equal(t, syscall.SIGKILL, g.cmd.SysProcAttr.Pdeathsig)
}

func TestStop_EndsTheWholeGroup(t *testing.T) {
	cases := []struct {
		name     string
		trapTerm bool
	}{
		{"leader obeys SIGTERM", false},
		{"leader ignores SIGTERM", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, helper := startWithHelper(t, tc.trapTerm)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			require.NoError(t, g.Stop(ctx, 100*time.Millisecond))
			assert.NotNil(t, g.ProcessState(), "the leader was waited for")
			require.Eventually(t, func() bool { return processGone(helper) }, 10*time.Second, 10*time.Millisecond,
				"the helper outlived its group")
			assert.Eventually(t, func() bool { return !Alive(g.Pid()) }, 10*time.Second, 10*time.Millisecond,
				"the group still has members once its zombies are reaped")
		})
	}
}

func TestEnd_WithoutExitedWatchesTheGroup(t *testing.T) {
	// The leader is reaped by someone else (an SDK's transport): End must
	// still come back once the group is empty, well before the grace.
	cmd := exec.Command("bash", "-c", "sleep 300")
	Prepare(cmd)
	require.NoError(t, cmd.Start())
	reaped := make(chan struct{})
	go func() { cmd.Wait(); close(reaped) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, End(ctx, cmd.Process.Pid, nil, time.Hour))
	<-reaped
	assert.False(t, Alive(cmd.Process.Pid))
}

func TestKill_RefusesGroupsThatAreNotAChild(t *testing.T) {
	for _, pgid := range []int{-1, 0, 1} {
		assert.Error(t, Kill(pgid, syscall.SIGTERM), "pgid %d", pgid)
	}
	assert.False(t, Alive(0))
}
