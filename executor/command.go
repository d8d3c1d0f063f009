package executor

import (
	"context"
	"time"

	"github.com/actionserver/actionserver/shell"
)

// Bounds of one output read, so a read cannot hold a large buffer or a
// request for long.
const (
	MaxOutputChunk = 1 << 20
	MaxOutputWait  = time.Minute
)

// Command is a command started in a session. Its output is kept by offset
// (up to the shell's output limit), so readers can follow it at their own
// pace and resume where they stopped.
type Command struct {
	session string
	c       *shell.Command
}

// ID returns the command's id, unique within its session.
func (c *Command) ID() int64 { return c.c.ID }

// CommandInfo is a command's state. Front ends map it to their wire format.
type CommandInfo struct {
	ID      int64
	Session string
	Command string
	// Running is true until the prompt came back or the shell died.
	Running bool
	// ExitCode is nil while the command runs.
	ExitCode *int
	// ShellDied reports that the shell exited before the command finished;
	// ExitCode is then the shell's exit status.
	ShellDied bool
	Started   time.Time
	Finished  *time.Time
	// Metadata is what the prompt reported after the command; nil while it
	// runs.
	Metadata *CommandMeta
	// Output is the span of output still kept.
	Output OutputRange
}

// CommandMeta is what the prompt reported after a command.
type CommandMeta struct {
	ExitCode          int
	PID               int
	Username          string
	Hostname          string
	WorkingDir        string
	PyInterpreterPath string
}

// OutputRange is the span of a command's output still kept, in byte
// offsets from its first byte of output.
type OutputRange struct {
	Start, End int64
}

// Info returns the command's state.
func (c *Command) Info() CommandInfo {
	st := c.c.Status()
	info := CommandInfo{ID: st.ID, Session: c.session, Command: st.Text, Running: st.Running, ShellDied: st.Died,
		Started: st.Started, Output: OutputRange{Start: st.OutputStart, End: st.OutputEnd}}
	if !st.Running {
		m := st.Metadata
		code, fin := m.ExitCode, st.Finished
		info.ExitCode, info.Finished = &code, &fin
		info.Metadata = &CommandMeta{ExitCode: m.ExitCode, PID: m.PID, Username: m.Username, Hostname: m.Hostname,
			WorkingDir: m.WorkingDir, PyInterpreterPath: m.PyInterpreterPath}
	}
	return info
}

// Changed returns a channel that is closed the next time the command's
// output or state changes. Take it before Read, then wait on it, so no
// change is missed; a reader that waits never holds up the command.
func (c *Command) Changed() <-chan struct{} { return c.c.Changed() }

// OutputChunk is one read of a command's output. Front ends map it to
// their wire format.
type OutputChunk struct {
	// Offset is where Data starts; NextOffset is just after it, where the
	// next read starts.
	Offset, NextOffset int64
	// Lost counts the bytes between the offset asked for and Offset that
	// the shell dropped.
	Lost int64
	Data string
	// Tail is the text after NextOffset that may still change (the line
	// under the cursor); it is not part of the offsets.
	Tail string
	// Done reports that the command finished and Data reaches the end of
	// its output.
	Done bool
	// ExitCode is set once Done.
	ExitCode *int
}

// Read returns up to max bytes (at most MaxOutputChunk) of the finished
// output lines from offset off, without waiting.
func (c *Command) Read(off int64, max int) OutputChunk {
	if max < 0 || max > MaxOutputChunk {
		max = MaxOutputChunk
	}
	ch := c.c.Read(off, max)
	out := OutputChunk{Offset: ch.Offset, NextOffset: ch.Next, Lost: ch.Lost, Data: string(ch.Data),
		Tail: ch.Tail, Done: ch.Done}
	if ch.Done {
		code := c.c.Status().Metadata.ExitCode
		out.ExitCode = &code
	}
	return out
}

// Output reads like Read, but when there is nothing new yet (no data, no
// loss, not done) it waits up to wait (at most MaxOutputWait) for some. It
// fails only when ctx ends.
func (c *Command) Output(ctx context.Context, off int64, max int, wait time.Duration) (OutputChunk, error) {
	deadline := time.NewTimer(min(wait, MaxOutputWait))
	defer deadline.Stop()
	for {
		changed := c.Changed()
		ch := c.Read(off, max)
		if ch.Data != "" || ch.Lost > 0 || ch.Done || wait <= 0 {
			return ch, nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return ch, nil
		case <-ctx.Done():
			return OutputChunk{}, ctx.Err()
		}
	}
}

// Done is closed when the command has finished (or its shell died).
func (c *Command) Done() <-chan struct{} { return c.c.Done() }
