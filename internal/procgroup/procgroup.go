// Package procgroup runs child processes the one way the server runs all of
// them: each leads a process group of its own, dies with the server, and is
// ended politely, then firmly, with everything it forked. It also paces the
// restarts of supervised children.
//
// A process group, not the child alone, is what gets signalled: servers such
// as Jupyter, VS Code or an MCP server fork helpers, and a helper left behind
// keeps ports, files and memory after its parent is gone.
package procgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Grace is how long a group gets between SIGTERM and SIGKILL. It is the
// same for every child, and short enough that several children ended side
// by side still fit the server's own five-second shutdown.
const Grace = 3 * time.Second

// Prepare makes cmd lead a new process group and has the kernel send it
// SIGKILL if the server dies first, so no child outlives a crashed server.
// It keeps whatever else cmd.SysProcAttr holds (credentials, a terminal).
//
// The kernel sends the parent-death signal when the thread that forked the
// child exits; the Go runtime keeps its threads unless a goroutine that
// locked one exits still locked, which this server's goroutines that start
// children never do.
func Prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// Group is a started child that leads its own process group.
type Group struct {
	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{} // closed once Wait returned; err is set then
	err     error
}

// Start prepares cmd (see Prepare), starts it and waits for it in the
// background; Exited tells when it has exited.
func Start(cmd *exec.Cmd) (*Group, error) {
	Prepare(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &Group{cmd: cmd, started: time.Now(), exited: make(chan struct{})}
	go func() {
		g.err = cmd.Wait()
		close(g.exited)
	}()
	return g, nil
}

// Pid is the leader's process id, which is also the group's id.
func (g *Group) Pid() int { return g.cmd.Process.Pid }

// Started is when the leader was started.
func (g *Group) Started() time.Time { return g.started }

// Exited is closed once the leader has exited and been waited for.
func (g *Group) Exited() <-chan struct{} { return g.exited }

// Err is what waiting for the leader returned; valid once Exited is closed.
func (g *Group) Err() error {
	select {
	case <-g.exited:
		return g.err
	default:
		return nil
	}
}

// ProcessState is the leader's exit state; nil until Exited is closed.
func (g *Group) ProcessState() *os.ProcessState {
	select {
	case <-g.exited:
		return g.cmd.ProcessState
	default:
		return nil
	}
}

// Signal sends sig to every process of the group.
func (g *Group) Signal(sig syscall.Signal) error { return Kill(g.Pid(), sig) }

// Stop ends the group (see End) and waits for the leader.
func (g *Group) Stop(ctx context.Context, grace time.Duration) error {
	return End(ctx, g.Pid(), g.exited, grace)
}

// Kill sends sig to process group pgid; a group that is already gone is
// no error.
func Kill(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("refusing to signal process group %d", pgid)
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal process group %d: %w", pgid, err)
	}
	return nil
}

// Alive reports whether process group pgid still has a member; one this
// process may not signal (it ran a setuid program) counts as a member.
func Alive(pgid int) bool {
	if pgid <= 1 {
		return false
	}
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// pollEvery is how often End looks whether a group it cannot wait for has
// emptied.
const pollEvery = 20 * time.Millisecond

// End ends process group pgid: SIGTERM, then SIGKILL once grace has passed
// or ctx has ended, unless the group went first. The SIGKILL goes out even
// after the leader exited cleanly, for helpers that outlived it.
//
// exited is closed when the leader has been waited for, by whoever started
// it; End then returns once it is, or with an error when ctx ends first.
// With a nil exited (the leader is reaped elsewhere) End watches the group
// itself, and returns when it is empty or, after the SIGKILL, at once.
func End(ctx context.Context, pgid int, exited <-chan struct{}, grace time.Duration) error {
	if err := Kill(pgid, syscall.SIGTERM); err != nil {
		return err
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	var tick <-chan time.Time
	if exited == nil {
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		tick = t.C
	}
wait:
	for {
		select {
		case <-exited:
			break wait
		case <-deadline.C:
			break wait
		case <-ctx.Done():
			break wait
		case <-tick:
			if !Alive(pgid) {
				break wait
			}
		}
	}
	_ = Kill(pgid, syscall.SIGKILL)
	if exited == nil {
		return nil
	}
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("process group %d did not exit: %w", pgid, ctx.Err())
	}
}
