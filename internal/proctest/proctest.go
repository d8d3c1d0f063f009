// Package proctest helps tests that check which processes outlive what:
// orphans that a command leaves behind, read back by pid, watched until
// they end, and killed if a failed test leaves them running. Both the
// shell's own tests and the end-to-end tests use it.
package proctest

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Exited reports whether pid is gone; a zombie waiting for its parent
// counts as gone.
func Exited(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// ReadPIDs waits until file holds n pids, one a line, and returns them.
func ReadPIDs(t *testing.T, file string, n int) []int {
	t.Helper()
	var pids []int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		pids = pids[:0]
		for _, f := range strings.Fields(string(data)) {
			pid, err := strconv.Atoi(f)
			require.NoError(t, err)
			pids = append(pids, pid)
		}
		return len(pids) >= n
	}, 30*time.Second, 10*time.Millisecond, "%d pids in %s", n, file)
	return pids
}

// KillLeftovers kills, when the test ends, those of *pids still running:
// what a failed test left behind.
func KillLeftovers(t *testing.T, pids *[]int) {
	t.Cleanup(func() {
		for _, pid := range *pids {
			if !Exited(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// OrphanScript is shell that starts, and leaves behind, a process in the
// command's group and one that ignores SIGTERM; each writes its pid to
// file.
func OrphanScript(file string) string {
	return `sleep 1000 & echo $! >>` + file + `
(trap '' TERM; exec sleep 1001) & echo $! >>` + file
}
