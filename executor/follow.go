package executor

import (
	"context"
	"time"
)

// Following a command's output, once for every front end.
//
// A reader answered at the first new byte carries whatever arrived since
// the previous one: following a command that prints fast took 400 to 1,100
// long polls for 7 MB, and an event per terminal read cost a wake-up and an
// encoding each. So once output is there, a reader waits GatherFor for
// more, unless it has a full chunk or the command is done.

// GatherFor is how long a reader that has some output waits for more to
// join it.
const GatherFor = 10 * time.Millisecond

// gather waits GatherFor (or until until, if sooner) for more output to
// join an answer, unless c already has max bytes after off or is done.
// It does not wake at each new piece of output: a reader woken at every
// terminal read takes the CPU the terminal's reader needs.
func (c *Command) gather(ctx context.Context, off, max int64, until time.Time) {
	if info := c.Info(); !info.Running || info.Output.End-off >= max {
		return
	}
	timer := time.NewTimer(min(GatherFor, time.Until(until)))
	defer timer.Stop()
	select {
	case <-c.Done():
	case <-timer.C:
	case <-ctx.Done():
	}
}

// Poll is a long poll's read: like Output, and once some output is there
// (and the chunk is neither full, lost nor the last) it lets more join the
// answer for GatherFor, within wait. It fails only when ctx ends.
func (c *Command) Poll(ctx context.Context, off int64, max int, wait time.Duration) (OutputChunk, error) {
	wait = min(wait, MaxOutputWait)
	until := time.Now().Add(wait)
	max = min(max, MaxOutputChunk)
	ch, err := c.Output(ctx, off, max, wait)
	if err != nil {
		return ch, err
	}
	if wait > 0 && len(ch.Data) > 0 && len(ch.Data) < max && ch.Lost == 0 && !ch.Done {
		c.gather(ctx, off, int64(max), until)
		ch = c.Read(off, max)
	}
	return ch, nil
}

// FollowKind is what a FollowEvent says.
type FollowKind int

// The events of Follow, in the order they can come for one read: output
// dropped before the reader's offset, then the data, then (when the
// command goes on) its live line; FollowExit is the last event.
const (
	// FollowLost: output between From and To was dropped before it was
	// read (Lost bytes).
	FollowLost FollowKind = iota
	// FollowOutput: Data starts at Offset and ends at Next.
	FollowOutput
	// FollowTail: the live line (no newline yet) after Offset changed to
	// Tail; sent only when the command goes on.
	FollowTail
	// FollowIdle: everything there is was reported and the follower is
	// about to wait (a stream flushes here).
	FollowIdle
	// FollowKeepAlive: KeepAlive passed with nothing new.
	FollowKeepAlive
	// FollowExit: the command is done; Next is the end of its output.
	FollowExit
)

// FollowEvent is one step of following a command's output.
type FollowEvent struct {
	Kind     FollowKind
	From, To int64 // FollowLost
	Lost     int64 // FollowLost: To - From
	Offset   int64 // FollowOutput, FollowTail
	Next     int64 // FollowOutput, FollowExit: the offset after the data
	Data     string
	Tail     string
}

// FollowOptions bound Follow.
type FollowOptions struct {
	// Chunk is the most data one FollowOutput carries; at most
	// MaxOutputChunk.
	Chunk int
	// KeepAlive, when positive, sends FollowKeepAlive after that long
	// without a change.
	KeepAlive time.Duration
}

// Follow reports c's output from off as events to emit until the command
// is done (FollowExit, the last), ctx ends or emit returns false. A
// reader follows at its own pace: what the shell dropped before it was
// read is reported as lost, never silently skipped.
func (c *Command) Follow(ctx context.Context, off int64, o FollowOptions, emit func(FollowEvent) bool) {
	chunk := o.Chunk
	if chunk <= 0 || chunk > MaxOutputChunk {
		chunk = MaxOutputChunk
	}
	var keepAlive <-chan time.Time
	if o.KeepAlive > 0 {
		t := time.NewTicker(o.KeepAlive)
		defer t.Stop()
		keepAlive = t.C
	}
	lastTail := ""
	for {
		changed := c.Changed()
		ch := c.Read(off, chunk)
		if ch.Lost > 0 {
			if !emit(FollowEvent{Kind: FollowLost, From: off, To: ch.Offset, Lost: ch.Lost}) {
				return
			}
		}
		if ch.Data != "" {
			if !emit(FollowEvent{Kind: FollowOutput, Offset: ch.Offset, Next: ch.NextOffset, Data: ch.Data}) {
				return
			}
		}
		off = ch.NextOffset
		if ch.Done {
			emit(FollowEvent{Kind: FollowExit, Next: off})
			return
		}
		if ch.Data != "" {
			continue // drain what is there before waiting
		}
		if ch.Tail != lastTail {
			lastTail = ch.Tail
			if !emit(FollowEvent{Kind: FollowTail, Offset: off, Tail: ch.Tail}) {
				return
			}
		}
		if !emit(FollowEvent{Kind: FollowIdle}) {
			return
		}
		select {
		case <-changed:
			c.gather(ctx, off, int64(chunk), time.Now().Add(GatherFor))
		case <-keepAlive:
			if !emit(FollowEvent{Kind: FollowKeepAlive}) {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}
