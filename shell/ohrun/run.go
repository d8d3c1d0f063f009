package ohrun

import (
	"context"
	"strings"
	"time"

	"github.com/actionserver/actionserver/shell"
)

// Request is one "run" action for a session.
type Request struct {
	// Command is the command, the input for the running command (IsInput),
	// a control key such as "C-c", or "" to fetch more output.
	Command string
	// IsInput sends Command to the running command instead of the shell.
	IsInput bool
	// Blocking disables the no-change timeout.
	Blocking bool
	// Timeout is the hard timeout; 0 means none.
	Timeout time.Duration
	// Hidden keeps the output whole (no truncation).
	Hidden bool
}

// Result is the observation of one Request.
type Result struct {
	// Content is the command's new output, cleaned and possibly truncated.
	Content string
	// Command is the request's command, trimmed.
	Command string
	// Finished reports that the command completed, so Metadata is known.
	Finished bool
	Metadata shell.Metadata
	// Prefix and Suffix frame Content for the agent.
	Prefix, Suffix string
	Hidden         bool
}

// Run executes one request with the semantics of OpenHands' bash session:
// a new command runs until it completes, prints nothing for the no-change
// timeout (unless blocking) or reaches the hard timeout; a command that did
// not complete keeps running, and later requests fetch its output ("") or
// send it input. A MultipleCommandsError rejects several commands at once.
func (r *Runner) Run(ctx context.Context, req Request) (Result, error) {
	t, err := r.sh.Acquire(ctx)
	if err != nil {
		return Result{}, err
	}
	defer t.Release()
	res, err := r.run(ctx, t, req)
	if err != nil {
		return res, err
	}
	// The shells replaced since the last observation, this request's
	// included, are told before it. A failed request leaves them to the
	// next.
	var note strings.Builder
	for _, rs := range t.TakeRestarts() {
		note.WriteString(prefixRestarted(rs.Status, rs.Dir))
	}
	res.Prefix = note.String() + res.Prefix
	return res, nil
}

func (r *Runner) run(ctx context.Context, t *shell.Turn, req Request) (Result, error) {
	cmd := strings.TrimSpace(req.Command)
	last, gen := t.Last()
	r.sync(gen)
	running := last != nil && !isDone(last)
	unreported := last != nil && !running && !r.view.reported && r.view.observed > 0

	if !running && !unreported {
		if cmd == "" {
			return Result{Content: msgNoCommandForLogs, Metadata: unknownMetadata()}, nil
		}
		if req.IsInput {
			return Result{Content: msgNoCommandForInput, Metadata: unknownMetadata()}, nil
		}
	}
	if parts := shell.SplitCommands(cmd); len(parts) > 1 {
		return Result{}, &shell.MultipleCommandsError{Commands: parts}
	}

	switch {
	case running && !req.IsInput && cmd != "":
		return r.refuse(last, cmd, req), nil
	case unreported && (req.IsInput || cmd == ""):
		// It finished while nobody watched: report that, send nothing.
		return r.completed(t, last, req, cmd), nil
	case running:
		// The job in the terminal's foreground as the key goes: if later
		// another one is, the loop it belonged to went on (see
		// interruptMoved).
		fg := 0
		if key, ok := shell.ControlKey(cmd); ok && key == ctrlC {
			fg, _ = t.Foreground()
		}
		if cmd != "" {
			if err := sendInput(t, cmd); err != nil {
				return Result{}, err
			}
		}
		return r.wait(ctx, t, last, req, cmd, fg)
	}

	// A new command. What the previous one printed after it was last
	// shown goes first, so nothing is lost.
	var carried string
	if unreported {
		carried = r.completed(t, last, req, "").Content
	}
	var c *shell.Command
	var err error
	if _, ok := shell.ControlKey(cmd); ok {
		c, err = t.BeginKey(ctx, cmd)
	} else {
		c, err = t.Begin(cmd)
	}
	_, gen = t.Last()
	r.sync(gen)
	if err != nil {
		return Result{}, err
	}
	res, err := r.wait(ctx, t, c, req, cmd, 0)
	if err == nil && carried != "" {
		res.Content = strings.TrimSpace(carried + "\n" + res.Content)
	}
	return res, err
}

// sendInput types text and Enter into the running command, or sends a
// control key.
func sendInput(t *shell.Turn, cmd string) error {
	if key, ok := shell.ControlKey(cmd); ok {
		return t.Write([]byte{key})
	}
	return t.Write([]byte(cmd + "\n"))
}

// completed builds the observation of a finished command.
func (r *Runner) completed(t *shell.Turn, c *shell.Command, req Request, cmd string) Result {
	st := c.Status()
	meta := st.Metadata

	text, truncated, lines := r.window(c, req.Hidden)
	res := Result{Command: cmd, Finished: true, Metadata: meta, Hidden: req.Hidden}
	if r.view.observed == 0 && truncated {
		res.Prefix = prefixTruncated(lines)
	}
	t.SetCwd(meta.WorkingDir)
	switch {
	case st.Died:
		res.Suffix = suffixShellExited(meta.ExitCode, t.Cwd())
	case st.Key:
		res.Suffix = suffixCompletedKey(meta.ExitCode, c.Text)
	case shell.IsKeyName(cmd):
		res.Suffix = suffixCompletedKey(meta.ExitCode, cmd)
	default:
		res.Suffix = suffixCompleted(meta.ExitCode)
	}
	res.Content = r.finish(text, req, cmd)
	r.view.observed++
	r.view.reported = true
	return res
}

// timedOut builds the observation of a command still running.
func (r *Runner) timedOut(c *shell.Command, req Request, cmd, suffix string) Result {
	text, truncated, lines := r.window(c, req.Hidden)
	res := Result{Command: cmd, Metadata: unknownMetadata(), Suffix: suffix, Hidden: req.Hidden}
	switch {
	case r.view.observed > 0:
		res.Prefix = prefixContinued
	case truncated:
		res.Prefix = prefixTruncated(lines)
	}
	res.Content = r.finish(text, req, cmd)
	r.view.observed++
	return res
}

// refuse answers a new command sent while another one runs: it is not run;
// the running command's new output is shown instead.
func (r *Runner) refuse(c *shell.Command, cmd string, req Request) Result {
	text, _, _ := r.window(c, req.Hidden)
	res := Result{Command: cmd, Metadata: unknownMetadata(), Suffix: suffixNotExecuted(cmd), Hidden: req.Hidden}
	if r.view.observed > 0 {
		res.Prefix = prefixContinued
	}
	res.Content = r.finish(text, Request{Hidden: req.Hidden}, "")
	r.view.observed++
	return res
}
