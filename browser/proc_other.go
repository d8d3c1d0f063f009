//go:build !linux

package browser

import (
	"os"
	"os/exec"
)

// setProcessAttrs has nothing to add outside Linux: chromedp ends the
// browser and the processes that use its profile directory.
func setProcessAttrs(cmd *exec.Cmd) {}

// killProcessGroup ends the Chromium main process.
func killProcessGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// killProfileProcesses has no process table to search outside Linux.
func killProfileProcesses(dir string) int { return 0 }
