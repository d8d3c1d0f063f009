package shell

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// dirPrefix starts the name of a session's private directory; the server's
// pid follows, so directories left by a server that was killed can be told
// from those of one still running.
const dirPrefix = "action-server-shell-"

func sessDirPrefix() string { return dirPrefix + strconv.Itoa(os.Getpid()) + "-" }

var sweepOnce sync.Once

// sweepDelay is how long after the first shell is up the sweep runs.
const sweepDelay = 5 * time.Second

// sweepStaleDirs removes session directories whose server no longer runs:
// a server ended by SIGKILL cannot remove its own.
func sweepStaleDirs(tempDir string) {
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	matches, _ := filepath.Glob(filepath.Join(tempDir, dirPrefix+"*-*"))
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), dirPrefix)
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			os.RemoveAll(m)
		}
	}
}
