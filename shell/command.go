package shell

import (
	"sync"
	"time"
	"unicode/utf8"
)

// Metadata is what the prompt reports after each command.
type Metadata struct {
	ExitCode          int
	PID               int // $!: the last background job, -1 when none
	Username          string
	Hostname          string
	WorkingDir        string
	PyInterpreterPath string // `which python`, empty when none
}

// unknownMetadata is the metadata of a command that has not finished.
func unknownMetadata() Metadata { return Metadata{ExitCode: -1, PID: -1} }

// Command is one command run in a session, with its output.
type Command struct {
	// ID numbers commands within their session, from 1.
	ID int64
	// Text is the command as the agent sent it.
	Text    string
	Started time.Time

	// heredocs and incomplete are set before the command reaches bash.
	//
	// heredocs are the here-documents the command leaves open: bash reads
	// their bodies from the terminal, as input sent to the command.
	heredocs []heredocStop
	// incomplete marks a command that ends inside an unterminated
	// construct. After the "unexpected EOF" error it causes inside eval,
	// bash prints the prompt with the previous command's $? (it sets 2 only
	// afterwards), so the status is corrected when that error is seen.
	incomplete bool

	out  *ring
	done chan struct{} // closed when the command finished or the shell died
	proc *process      // the bash it ran in; nil for a piped command
	// mu guards the fields below, and out: for a command run in the
	// terminal it is its process's mu, which the reader holds while it
	// moves output and state together; a piped command has its own.
	mu *sync.Mutex

	changed  chan struct{} // closed at the next change; see Changed
	finished time.Time
	meta     Metadata
	died     bool // the shell exited before the command finished
	special  bool // a control key sent at the prompt, not a command
}

// CommandStatus is a snapshot of a command.
type CommandStatus struct {
	ID      int64
	Text    string
	Started time.Time
	// Running is true until the prompt came back or the shell died.
	Running  bool
	Finished time.Time
	// Died reports that the shell exited before the command finished;
	// Metadata.ExitCode is then the shell's exit status.
	Died bool
	// Key reports a control key sent at the prompt (Turn.BeginKey), not a
	// command.
	Key bool
	// Metadata is valid once the command is no longer running.
	Metadata Metadata
	// OutputStart and OutputEnd delimit the output still kept, as byte
	// offsets from the command's first byte of output.
	OutputStart, OutputEnd int64
}

// Status returns a snapshot of c.
func (c *Command) Status() CommandStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := CommandStatus{ID: c.ID, Text: c.Text, Started: c.Started, Running: !isClosed(c.done),
		OutputStart: c.out.start(), OutputEnd: c.out.total}
	if !st.Running {
		st.Finished, st.Died, st.Metadata = c.finished, c.died, c.meta
	}
	st.Key = c.special
	return st
}

// Tail is the end of a command's output as a viewer reads it (Command.Tail).
type Tail struct {
	// Data is the finalized output from the offset asked for, or from
	// the start of the lines asked for when that is later.
	Data []byte
	// Lost counts the bytes before Data, after the offset asked for, that
	// were dropped because the output buffer overflowed.
	Lost int64
	// Skipped reports that Data starts at the lines asked for, later than
	// the offset.
	Skipped bool
	// Live is the text after Data that may still change (the line under
	// the cursor, a progress display) while the command runs.
	Live string
	// End is the offset just after Data.
	End int64
}

// Tail reads the finalized output from off, or only the last lines lines
// of it when lines > 0 and they start later, with the live text after it,
// at one instant. Unlike Read it may start or end inside a rune: a viewer
// that shows text cleans it.
func (c *Command) Tail(off int64, lines int) Tail {
	c.mu.Lock()
	defer c.mu.Unlock()
	var t Tail
	from := off
	if lines > 0 {
		if ls := c.out.lineStart(lines); ls > from {
			from, t.Skipped = ls, true
		}
	}
	t.Data, t.Lost = c.out.ReadFrom(from, -1)
	if c.proc != nil {
		t.Live = string(c.proc.liveText(c))
	}
	t.End = c.out.total
	return t
}

// Done is closed when the command has finished or its shell died.
func (c *Command) Done() <-chan struct{} { return c.done }

// Changed returns a channel that is closed the next time the command's
// output or state changes. Take it before reading, then wait on it, so no
// change is missed. Waiting never holds anything up: the writer only closes
// channels, so a slow or stalled reader cannot slow the command or other
// readers.
func (c *Command) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.changed
}

// notify wakes the readers waiting on Changed. Called with c.mu held.
func (c *Command) notify() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// Chunk is a piece of a command's finalized output.
type Chunk struct {
	// Offset is where Data starts; Next is the offset just after it, where
	// the following read should start.
	Offset, Next int64
	Data         []byte
	// Lost counts the bytes between the requested offset and Offset that
	// were dropped because the output buffer overflowed.
	Lost int64
	// Tail is the text after Next that may still change (the line under the
	// cursor, a progress display). It is not part of the offsets.
	Tail string
	// Done reports that the command finished and Data reaches the end of
	// its output.
	Done bool
}

// Read returns up to max bytes (max < 0: all) of the finalized output from
// offset off. Data never ends inside a UTF-8 rune, and never starts inside
// one: bytes of a rune cut by the buffer's drop count as lost.
func (c *Command) Read(off int64, max int) Chunk {
	c.mu.Lock()
	defer c.mu.Unlock()
	// An offset past the end reads as the end, so a client that asks for
	// "whatever comes next" with a large offset still learns when the
	// command is done.
	if off < 0 {
		off = 0
	}
	if off > c.out.total {
		off = c.out.total
	}
	data, lost := c.out.ReadFrom(off, max)
	start := off + lost
	if lost > 0 {
		// The kept output may start in the middle of a rune.
		skip := 0
		for skip < len(data) && skip < utf8.UTFMax && !utf8.RuneStart(data[skip]) {
			skip++
		}
		data, lost, start = data[skip:], lost+int64(skip), start+int64(skip)
	}
	if start+int64(len(data)) < c.out.total || !isClosed(c.done) {
		// More may follow: do not end inside a rune.
		data = data[:completeRunes(data)]
	}
	ch := Chunk{Offset: start, Next: start + int64(len(data)), Data: data, Lost: lost}
	ch.Done = isClosed(c.done) && ch.Next == c.out.total
	if !ch.Done && ch.Next == c.out.total {
		if c.proc != nil {
			ch.Tail = string(c.proc.liveText(c))
		}
	}
	return ch
}

// completeRunes returns the length of the longest prefix of b that does not
// end inside a UTF-8 rune.
func completeRunes(b []byte) int {
	n := len(b)
	for i := 1; i <= utf8.UTFMax && i <= n; i++ {
		if !utf8.RuneStart(b[n-i]) {
			continue
		}
		if !utf8.FullRune(b[n-i:]) {
			return n - i
		}
		break
	}
	return n
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
