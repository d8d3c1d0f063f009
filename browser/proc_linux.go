package browser

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/actionserver/actionserver/internal/procgroup"
)

// setProcessAttrs puts Chromium in its own process group, so that Close can
// end it with every helper process it forked, and has the kernel kill it if
// the server dies first.
func setProcessAttrs(cmd *exec.Cmd) { procgroup.Prepare(cmd) }

// killProcessGroup ends the process group that Chromium leads.
func killProcessGroup(pid int) { _ = procgroup.Kill(pid, syscall.SIGKILL) }

// killProfileProcesses kills the processes whose command line names dir as
// their user data directory. Chromium passes it to every helper it starts,
// and dir is unique to one start, so these are ours: it catches helpers of a
// start that was cut short before Chromium's pid was known.
func killProfileProcesses(dir string) int {
	want := []byte("--user-data-dir=" + dir + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, want) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}
