package shell

import (
	"context"
	"strings"
	"time"

	"github.com/actionserver/actionserver/internal/pyfmt"
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
	Metadata Metadata
	// Prefix and Suffix frame Content for the agent.
	Prefix, Suffix string
	Hidden         bool
}

// Run executes one request with the semantics of OpenHands' bash session:
// a new command runs until it completes, prints nothing for the no-change
// timeout (unless blocking) or reaches the hard timeout; a command that did
// not complete keeps running, and later requests fetch its output ("") or
// send it input. A MultipleCommandsError rejects several commands at once.
func (s *Session) Run(ctx context.Context, req Request) (Result, error) {
	if err := s.acquire(ctx); err != nil {
		return Result{}, err
	}
	defer s.release()
	p, err := s.ensureProcess(ctx)
	if err != nil {
		return Result{}, err
	}
	res, err := s.run(ctx, p, req)
	if err != nil {
		return res, err
	}
	s.mu.Lock()
	res.Prefix = s.note + res.Prefix
	s.note = ""
	s.mu.Unlock()
	return res, nil
}

func (s *Session) run(ctx context.Context, p *process, req Request) (Result, error) {
	cmd := strings.TrimSpace(req.Command)
	last := s.last
	running := last != nil && !isClosed(last.done)
	unreported := last != nil && !running && !s.view.reported && s.view.observed > 0

	if !running && !unreported {
		if cmd == "" {
			return Result{Content: msgNoCommandForLogs, Metadata: unknownMetadata()}, nil
		}
		if req.IsInput {
			return Result{Content: msgNoCommandForInput, Metadata: unknownMetadata()}, nil
		}
	}
	if parts := SplitCommands(cmd); len(parts) > 1 {
		return Result{}, &MultipleCommandsError{Commands: parts}
	}

	switch {
	case running && !req.IsInput && cmd != "":
		return s.refuse(p, last, cmd, req), nil
	case unreported && (req.IsInput || cmd == ""):
		// It finished while nobody watched: report that, send nothing.
		return s.completed(p, last, req, cmd), nil
	case running:
		// The job in the terminal's foreground as the key goes: if later
		// another one is, the loop it belonged to went on (see
		// interruptMoved).
		fg := 0
		if key, ok := specialKey(cmd); ok && key == ctrlC {
			fg, _ = foregroundPgrp(p.pty)
		}
		if cmd != "" {
			if err := sendInput(p, cmd); err != nil {
				return Result{}, err
			}
		}
		return s.wait(ctx, p, last, req, cmd, fg)
	}

	// A new command. What the previous one printed after it was last
	// shown goes first, so nothing is lost.
	var carried string
	if unreported {
		carried = s.completed(p, last, req, "").Content
	}
	c := s.newCommand(p, cmd)
	var err error
	if key, ok := specialKey(cmd); ok {
		err = p.sendKeyAtPrompt(ctx, c, key)
	} else {
		err = p.run(c)
	}
	if err != nil {
		s.abandon(p, c, last)
		return Result{}, err
	}
	res, err := s.wait(ctx, p, c, req, cmd, 0)
	if err == nil && carried != "" {
		res.Content = strings.TrimSpace(carried + "\n" + res.Content)
	}
	return res, err
}

// sendInput types text and Enter into the running command, or sends a
// control key.
func sendInput(p *process, cmd string) error {
	if key, ok := specialKey(cmd); ok {
		return p.write([]byte{key})
	}
	return p.write([]byte(cmd + "\n"))
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

// keyQuiet is the shortest no-change wait after a control key. A key
// usually ends the command, but bash may print its prompt only once the
// child it waits for is done: Ctrl-C that lands while a loop is between
// two commands reaches bash, not the child, and the loop stops after the
// child. With a short NO_CHANGE_TIMEOUT the agent would be told the
// command still runs and be refused its next one.
const keyQuiet = 3 * time.Second

// wait watches c until it completes or a timeout ends the wait. fg is the
// terminal's foreground process group when a key was sent into the running
// command, else 0.
func (s *Session) wait(ctx context.Context, p *process, c *Command, req Request, cmd string, fg int) (Result, error) {
	start := time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	quiet := s.opts.NoChangeTimeout
	key, isKey := specialKey(cmd)
	if isKey {
		quiet = max(quiet, keyQuiet)
	}
	// Ctrl-C again, once, if the command went on printing as if it never
	// came (see interruptAgain).
	// Only for a key sent into a running command: c is then that command,
	// not the key itself.
	again, moved, resent := time.Time{}, time.Time{}, 0
	if isKey && key == ctrlC && c.Text != cmd {
		again = start.Add(interruptAgain)
		if fg > 0 {
			moved = start.Add(interruptMoved)
		}
	}
	for {
		now := time.Now()
		next := now.Add(time.Hour)
		if !moved.IsZero() {
			if !now.Before(moved) {
				if pg, err := foregroundPgrp(p.pty); err == nil && pg != fg && pg != p.pid {
					_ = p.write([]byte{ctrlC})
					fg = pg
					resent++
				}
				moved = now.Add(interruptMoved)
				if resent >= interruptMovedMax {
					moved = time.Time{}
				}
			}
			if !moved.IsZero() {
				next = moved
			}
		}
		if !again.IsZero() {
			if !now.Before(again) {
				if p.lastOutput.Load() > start.Add(interruptEcho).UnixNano() {
					_ = p.write([]byte{ctrlC})
				}
				again = time.Time{}
			} else if again.Before(next) {
				next = again
			}
		}
		if !req.Blocking {
			quietSince := max(start.UnixNano(), p.lastOutput.Load())
			soft := time.Unix(0, quietSince).Add(quiet)
			if !now.Before(soft) {
				return s.timedOut(p, c, req, cmd, suffixNoChange(formatSeconds(s.opts.NoChangeTimeout.Seconds()))), nil
			}
			if soft.Before(next) {
				next = soft
			}
		}
		if req.Timeout > 0 {
			hard := start.Add(req.Timeout)
			if !now.Before(hard) {
				return s.timedOut(p, c, req, cmd, suffixHardTimeout(pyfmt.Float(req.Timeout.Seconds()))), nil
			}
			if hard.Before(next) {
				next = hard
			}
		}
		timer.Reset(next.Sub(now))
		select {
		case <-c.done:
			return s.completed(p, c, req, cmd), nil
		case <-timer.C:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
}

// completed builds the observation of a finished command.
func (s *Session) completed(p *process, c *Command, req Request, cmd string) Result {
	p.mu.Lock()
	meta, died, special := c.meta, c.died, c.special
	p.mu.Unlock()

	text, truncated, lines := s.window(p, c, req.Hidden)
	s.mu.Lock()
	defer s.mu.Unlock()
	res := Result{Command: cmd, Finished: true, Metadata: meta, Hidden: req.Hidden}
	if s.view.observed == 0 && truncated {
		res.Prefix = prefixTruncated(lines)
	}
	if meta.WorkingDir != "" {
		s.cwd = meta.WorkingDir
	}
	switch {
	case died:
		res.Suffix = suffixShellExited(meta.ExitCode, s.cwd)
	case special:
		res.Suffix = suffixCompletedKey(meta.ExitCode, c.Text)
	case isSpecial(cmd):
		res.Suffix = suffixCompletedKey(meta.ExitCode, cmd)
	default:
		res.Suffix = suffixCompleted(meta.ExitCode)
	}
	res.Content = s.finish(text, req, cmd)
	s.view.observed++
	s.view.reported = true
	return res
}

// timedOut builds the observation of a command still running.
func (s *Session) timedOut(p *process, c *Command, req Request, cmd, suffix string) Result {
	text, truncated, lines := s.window(p, c, req.Hidden)
	s.mu.Lock()
	defer s.mu.Unlock()
	res := Result{Command: cmd, Metadata: unknownMetadata(), Suffix: suffix, Hidden: req.Hidden}
	switch {
	case s.view.observed > 0:
		res.Prefix = prefixContinued
	case truncated:
		res.Prefix = prefixTruncated(lines)
	}
	res.Content = s.finish(text, req, cmd)
	s.view.observed++
	return res
}

// refuse answers a new command sent while another one runs: it is not run;
// the running command's new output is shown instead.
func (s *Session) refuse(p *process, c *Command, cmd string, req Request) Result {
	text, _, _ := s.window(p, c, req.Hidden)
	s.mu.Lock()
	defer s.mu.Unlock()
	res := Result{Command: cmd, Metadata: unknownMetadata(), Suffix: suffixNotExecuted(cmd), Hidden: req.Hidden}
	if s.view.observed > 0 {
		res.Prefix = prefixContinued
	}
	res.Content = s.finish(text, Request{Hidden: req.Hidden}, "")
	s.view.observed++
	return res
}
