package plugins

import (
	"os/exec"
	"syscall"
	"time"
)

// EndGroup ends the process group cmd leads (started with Setpgid):
// SIGTERM, then SIGKILL after grace if the leader has not exited, then
// SIGKILL again for whatever the group still holds (a server's kernels or
// helpers). exited must be closed once cmd has been waited for; EndGroup
// returns after that.
func EndGroup(cmd *exec.Cmd, exited <-chan struct{}, grace time.Duration) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	pgid := -cmd.Process.Pid
	syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		syscall.Kill(pgid, syscall.SIGKILL)
		<-exited
	}
	syscall.Kill(pgid, syscall.SIGKILL)
}
