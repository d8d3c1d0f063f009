package browser

import (
	"os/exec"
	"syscall"
)

// setProcessAttrs puts Chromium in its own process group, so that Close can
// end it with every helper process it forked, and has the kernel kill it if
// the server dies first.
func setProcessAttrs(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// killProcessGroup ends the process group that Chromium leads.
func killProcessGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
