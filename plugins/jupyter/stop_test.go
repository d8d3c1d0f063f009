package jupyter

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/plugins"
)

// markedProcesses returns the pids of the processes whose environment
// holds mark: the server, its kernels and what they started all inherit it.
func markedProcesses(t *testing.T, mark string) []string {
	t.Helper()
	environs, err := filepath.Glob("/proc/[0-9]*/environ")
	require.NoError(t, err)
	var pids []string
	for _, path := range environs {
		env, err := os.ReadFile(path)
		if err != nil {
			continue // gone meanwhile, or not ours
		}
		if bytes.Contains(env, []byte("\x00"+mark+"\x00")) || bytes.HasPrefix(env, []byte(mark+"\x00")) {
			pids = append(pids, filepath.Base(filepath.Dir(path)))
		}
	}
	return pids
}

func TestPlugin_StopWhileRestartingLeavesNoProcess(t *testing.T) {
	mark := "JUPYTER_TEST_MARK=" + newID()
	p := startPlugin(t, plugins.Env{Environ: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8", mark}})
	run(t, p, "1")
	require.NotEmpty(t, markedProcesses(t, mark), "the mark must reach the plugin's processes")

	pid := serverPID(p)
	require.NotZero(t, pid)
	require.NoError(t, syscall.Kill(-pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return p.Status().State == plugins.StateRestarting },
		30*time.Second, 5*time.Millisecond, "the supervisor notices the death")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, p.Stop(ctx), "Stop returns within its context")

	// The killed server's kernel notices its orphaning on its own within
	// a second; nothing else may be left, above all no new server.
	assert.Eventually(t, func() bool { return len(markedProcesses(t, mark)) == 0 }, 5*time.Second, 50*time.Millisecond,
		"processes of the plugin outlived Stop: %v", markedProcesses(t, mark))
	assert.Zero(t, serverPID(p), "no server after Stop")
}
