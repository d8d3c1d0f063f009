package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSweepStaleDirs_RemovesOnlyThoseOfDeadServers(t *testing.T) {
	tmp := t.TempDir()
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	stale := filepath.Join(tmp, dirPrefix+strconv.Itoa(dead.Process.Pid)+"-123")
	live := filepath.Join(tmp, dirPrefix+strconv.Itoa(os.Getppid())+"-456")
	old := filepath.Join(tmp, dirPrefix+"789") // named before pids were in names: left alone
	for _, d := range []string{stale, live, old} {
		require.NoError(t, os.Mkdir(d, 0o700))
	}
	sweepStaleDirs(tmp)
	_, err := os.Stat(stale)
	assert.ErrorIs(t, err, os.ErrNotExist)
	for _, d := range []string{live, old} {
		_, err := os.Stat(d)
		assert.NoError(t, err, d)
	}
}
