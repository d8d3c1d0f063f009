package plugins

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// EndGroup ends the process group cmd leads (started with Setpgid):
// SIGTERM, then SIGKILL once grace has passed or ctx has ended, if the
// leader has not exited by then, then SIGKILL again for whatever the group
// still holds (a server's helpers). exited must be closed once cmd has been
// waited for. EndGroup returns when it is, or with an error when ctx ends
// first; the group has been sent SIGKILL either way.
func EndGroup(ctx context.Context, cmd *exec.Cmd, exited <-chan struct{}, grace time.Duration) error {
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	pgid := cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
	case <-ctx.Done():
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("process group %d did not exit: %w", pgid, ctx.Err())
	}
}
