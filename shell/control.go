package shell

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

// Control of commands for the native API: start one without waiting (its
// output is then read by offset, see Command.Read), type into it, send it
// keys and signals, resize its terminal. It shares the session with the
// policies (shell/ohrun's Run): one request at a time.

// Errors of the native API.
var (
	ErrBusy       = errors.New("a command is already running in this session")
	ErrNotRunning = errors.New("no command is running in this session")
	ErrUnknownKey = errors.New("unknown key name")
)

// Start starts a command and returns at once. It fails with ErrBusy while
// another command runs or a request is being served.
func (s *Session) Start(ctx context.Context, text string) (*Command, error) {
	t, err := s.TryAcquire(ctx)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	if prev, _ := t.Last(); prev != nil && !isClosed(prev.done) {
		return nil, ErrBusy
	}
	return t.Begin(text)
}

// Input types text into the running command, followed by Enter when enter
// is set.
func (s *Session) Input(text string, enter bool) error {
	p, err := s.runningProcess()
	if err != nil {
		return err
	}
	if enter {
		text += "\n"
	}
	return p.write([]byte(text))
}

// Key sends a control key ("C-c", "C-d", ...) to the running command.
func (s *Session) Key(name string) error {
	key, ok := specialKey(name)
	if !ok {
		return ErrUnknownKey
	}
	p, err := s.runningProcess()
	if err != nil {
		return err
	}
	return p.write([]byte{key})
}

// Signal sends sig to the running command's process group, never to the
// shell, so the session survives. A command that runs inside the shell
// itself (a loop of builtins) can only be interrupted: SIGINT reaches it
// through the terminal, as Ctrl-C does.
func (s *Session) Signal(sig syscall.Signal) error {
	p, err := s.runningProcess()
	if err != nil {
		return err
	}
	err = signalForeground(p.pty, p.pid, sig)
	if errors.Is(err, errNothingRunning) {
		if sig == syscall.SIGINT {
			return p.write([]byte{ctrlC})
		}
		return errors.New("the command runs inside the shell itself; only SIGINT can stop it")
	}
	return err
}

// Resize sets the terminal size; programs get SIGWINCH. The size also
// applies to shells started after a restart.
func (s *Session) Resize(rows, cols uint16) error {
	if rows == 0 || cols == 0 {
		return errors.New("rows and cols must be positive")
	}
	s.mu.Lock()
	s.opts.Rows, s.opts.Cols = rows, cols
	p, closed := s.proc, s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return ErrClosed
	case p == nil:
		// Restarting: the new shell gets the size once it is up.
		return nil
	}
	return setWinsize(p.pty, rows, cols)
}

// runningProcess returns the shell while a command runs in it.
func (s *Session) runningProcess() (*process, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.last == nil || isClosed(s.last.done) || s.proc == nil {
		return nil, ErrNotRunning
	}
	return s.proc, nil
}

// Foreground returns the process group in the terminal's foreground while
// a command runs: the job to interrupt or kill, whose processes a policy
// may want to list before it does. It is 0 when the shell itself holds the
// foreground (the command is a builtin or a loop of them), and the error is
// ErrNotRunning when no command runs.
func (s *Session) Foreground() (int, error) {
	p, err := s.runningProcess()
	if err != nil {
		return 0, err
	}
	pgrp, err := foregroundPgrp(p.pty)
	if err != nil {
		return 0, fmt.Errorf("foreground process group: %w", err)
	}
	if pgrp <= 0 || pgrp == p.pid {
		return 0, nil
	}
	return pgrp, nil
}
