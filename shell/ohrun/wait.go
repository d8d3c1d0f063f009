package ohrun

import (
	"context"
	"time"

	"github.com/actionserver/actionserver/internal/pyfmt"
	"github.com/actionserver/actionserver/shell"
)

// keyQuiet is the shortest no-change wait after a control key. A key
// usually ends the command, but bash may print its prompt only once the
// child it waits for is done: Ctrl-C that lands while a loop is between
// two commands reaches bash, not the child, and the loop stops after the
// child. With a short NO_CHANGE_TIMEOUT the agent would be told the
// command still runs and be refused its next one.
const keyQuiet = 3 * time.Second

// wait watches c until it completes or a timeout ends the wait. fg is the
// terminal's foreground process group when a key was sent into the running
// command, else 0. Each turn of its loop does what is due (a Ctrl-C sent
// again, then a timeout) and sleeps until the next thing is.
func (r *Runner) wait(ctx context.Context, t *shell.Turn, c *shell.Command, req Request, cmd string, fg int) (Result, error) {
	start := time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	ends := r.timeouts(start, req, cmd)
	// Only for Ctrl-C sent into a running command: c is then that
	// command, not the key itself.
	var in interrupter
	if key, ok := shell.ControlKey(cmd); ok && key == ctrlC && c.Text != cmd {
		in = newInterrupter(t, start, fg)
	}
	for {
		now := time.Now()
		next := earliest(now.Add(time.Hour), in.act(now))
		suffix, end := ends.check(now, t.LastOutput())
		if suffix != "" {
			return r.timedOut(c, req, cmd, suffix), nil
		}
		timer.Reset(earliest(next, end).Sub(now))
		select {
		case <-c.Done():
			return r.completed(t, c, req, cmd), nil
		case <-timer.C:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
}

// timeouts are the two ends of a wait that leave the command running: no
// output for a while (unless blocking) and the hard timeout.
type timeouts struct {
	start time.Time
	// quiet is how long without output ends the wait, 0 for never; it is
	// longer than noChange after a key (see keyQuiet).
	quiet time.Duration
	// noChange is the setting the agent is told of.
	noChange time.Duration
	// hard is the hard timeout, 0 for none.
	hard time.Duration
}

// timeouts returns the ends of a wait for req that starts at start.
// NoChangeTimeout is never 0 (see setDefaults), so a quiet of 0 only
// means blocking.
func (r *Runner) timeouts(start time.Time, req Request, cmd string) timeouts {
	to := timeouts{start: start, noChange: r.opts.NoChangeTimeout, hard: req.Timeout}
	if !req.Blocking {
		to.quiet = r.opts.NoChangeTimeout
		if _, ok := shell.ControlKey(cmd); ok {
			to.quiet = max(to.quiet, keyQuiet)
		}
	}
	return to
}

// check returns the suffix of the timeout that has passed at now, given
// when the terminal last printed, or else "" and when the next one will,
// the zero time if none will. The no-change timeout goes first.
func (to timeouts) check(now, lastOutput time.Time) (string, time.Time) {
	var next time.Time
	if to.quiet > 0 {
		// The later of the start and the last output, on the wall clock:
		// lastOutput has no monotonic reading.
		soft := time.Unix(0, max(to.start.UnixNano(), lastOutput.UnixNano())).Add(to.quiet)
		if !now.Before(soft) {
			return suffixNoChange(formatSeconds(to.noChange.Seconds())), time.Time{}
		}
		next = soft
	}
	if to.hard > 0 {
		hard := to.start.Add(to.hard)
		if !now.Before(hard) {
			return suffixHardTimeout(pyfmt.Float(to.hard.Seconds())), time.Time{}
		}
		next = earliest(next, hard)
	}
	return "", next
}

// interruptAgain and interruptEcho: a Ctrl-C can be lost. When it reaches
// the terminal just as one command of a loop has ended and bash has not yet
// taken the terminal back, it goes to the ended command's empty process
// group and the loop runs on, as it would for a person, who would press
// Ctrl-C again. So does the server, once: if interruptAgain after the key
// the command still runs and has printed since (beyond the echo of the key,
// within interruptEcho), it sends Ctrl-C a second time.
//
// interruptMoved and interruptMovedMax: a loop of quiet commands
// (`while true; do sleep 1; done`) prints nothing to tell that Ctrl-C was
// lost, but bash starts each of its commands as a new job, in a process
// group of its own. A job in the terminal's foreground other than the one
// there when the key went means the loop went on: bash breaks a loop when
// its job dies of SIGINT. So every interruptMoved after the key, while the
// foreground job keeps changing, Ctrl-C goes again, up to
// interruptMovedMax times. A program that handles Ctrl-C and goes on (a
// REPL) stays the same job and gets no second key.
const (
	interruptAgain    = 1500 * time.Millisecond
	interruptEcho     = 200 * time.Millisecond
	interruptMoved    = 500 * time.Millisecond
	interruptMovedMax = 3
)

// terminal is what an interrupter uses of a shell.Turn.
type terminal interface {
	Write(b []byte) error
	Foreground() (int, error)
	ShellPID() int
	LastOutput() time.Time
}

// interrupter sends Ctrl-C again when the one sent into a running command
// looks lost (see interruptAgain and interruptMoved). Its zero value
// never does.
type interrupter struct {
	term  terminal
	start time.Time // when the first Ctrl-C went
	// again is when to look for output past the echo, moved when to look
	// at the foreground job next; zero once there is nothing more to do.
	again, moved time.Time
	fg           int // the foreground process group last seen
	resent       int // the Ctrl-Cs sent for a moved foreground
}

// newInterrupter watches for a Ctrl-C sent at start being lost. fg is the
// foreground process group as it went, 0 if unknown: then only output
// tells.
func newInterrupter(term terminal, start time.Time, fg int) interrupter {
	in := interrupter{term: term, start: start, fg: fg, again: start.Add(interruptAgain)}
	if fg > 0 {
		in.moved = start.Add(interruptMoved)
	}
	return in
}

// act does what is due at now and returns when it next needs to act, the
// zero time if never.
func (in *interrupter) act(now time.Time) time.Time {
	in.followForeground(now)
	in.retryIfPrinting(now)
	return earliest(in.moved, in.again)
}

// followForeground sends Ctrl-C again if another job than the last one
// seen holds the terminal (see interruptMoved).
func (in *interrupter) followForeground(now time.Time) {
	if in.moved.IsZero() || now.Before(in.moved) {
		return
	}
	if pg, err := in.term.Foreground(); err == nil && pg != in.fg && pg != in.term.ShellPID() {
		_ = in.term.Write([]byte{ctrlC})
		in.fg = pg
		in.resent++
	}
	in.moved = now.Add(interruptMoved)
	if in.resent >= interruptMovedMax {
		in.moved = time.Time{}
	}
}

// retryIfPrinting sends Ctrl-C again, once, if the command went on
// printing as if it never came (see interruptAgain).
func (in *interrupter) retryIfPrinting(now time.Time) {
	if in.again.IsZero() || now.Before(in.again) {
		return
	}
	if in.term.LastOutput().UnixNano() > in.start.Add(interruptEcho).UnixNano() {
		_ = in.term.Write([]byte{ctrlC})
	}
	in.again = time.Time{}
}

// earliest returns the earlier of a and b, the zero time standing for
// never.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
