// Package ohrun is OpenHands' "run" policy over the terminal engine of
// package shell: what an agent of the OpenHands host sees of a command. A
// command runs until it completes, prints nothing for a while (the
// no-change timeout) or reaches its hard timeout, and keeps running after;
// later requests fetch its new output or type into it. An observation
// shows what the agent has not seen yet, as a terminal shows it, cut to
// size, framed by the exact texts OpenHands agents are prompted with.
//
// It is built only on shell's exported API (a request's Turn, Command.Tail
// and Status), as SWE-ReX's run_in_session policy is in package swerex.
//
// Files:
//   - runner.go: Runner, its options, the agent's view of the last command.
//   - run.go: Run, and what it answers when the command ends or not.
//   - wait.go: the wait for a command: soft and hard timeouts, Ctrl-C
//     sent again.
//   - output.go: what an observation shows of a command's output.
//   - messages.go: the texts around it.
package ohrun

import (
	"time"

	"github.com/actionserver/actionserver/shell"
)

// Options configure a Runner. The zero value keeps OpenHands' defaults.
type Options struct {
	// NoChangeTimeout ends the wait for a non-blocking command that has
	// printed nothing for this long; default 10s.
	NoChangeTimeout time.Duration
	// HistoryLines is how many lines of a command's output an observation
	// shows at most, the rest being summarised by a prefix; default 11,000,
	// the scroll-back plus screen of OpenHands' terminal.
	HistoryLines int
	// MaxOutputChars bounds the content of an observation that is not
	// hidden: longer content keeps its head and tail; default 30,000.
	MaxOutputChars int
}

func (o *Options) setDefaults() {
	if o.NoChangeTimeout <= 0 {
		o.NoChangeTimeout = 10 * time.Second
	}
	if o.HistoryLines <= 0 {
		o.HistoryLines = 11000
	}
	if o.MaxOutputChars <= 0 {
		o.MaxOutputChars = 30000
	}
}

// Runner runs OpenHands' requests in one shell session. It keeps what the
// agent has seen of the session's last command, so there is one Runner per
// session, and its requests take the session's request lock in turn.
type Runner struct {
	sh   *shell.Session
	opts Options
	// view is guarded by the session's request lock: only Run, holding
	// its turn, reads or moves it.
	view view
}

// New returns the Runner of sh.
func New(sh *shell.Session, opts Options) *Runner {
	opts.setDefaults()
	return &Runner{sh: sh, opts: opts}
}

// Shell returns the session r runs in.
func (r *Runner) Shell() *shell.Session { return r.sh }

// sync forgets the view when another command became the last one.
func (r *Runner) sync(gen int64) {
	if r.view.gen != gen {
		r.view = view{gen: gen}
	}
}

// unknownMetadata is the metadata of a command that has not finished.
func unknownMetadata() shell.Metadata { return shell.Metadata{ExitCode: -1, PID: -1} }

// isDone reports whether c has finished, without waiting.
func isDone(c *shell.Command) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// ctrlC is the byte Ctrl-C sends.
const ctrlC = 0x03
