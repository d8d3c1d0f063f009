package shell

import (
	"context"
	"errors"
	"syscall"
	"time"
)

// The native API: commands started without waiting, read by offset, and
// controlled while they run. It shares the session with Run.

// Errors of the native API.
var (
	ErrBusy       = errors.New("a command is already running in this session")
	ErrNotRunning = errors.New("no command is running in this session")
	ErrUnknownKey = errors.New("unknown key name")
)

// historySize is how many commands a session remembers.
const historySize = 32

// remember adds c to the history, forgetting the oldest commands and the
// output of older finished ones beyond OutputLimit in total, so a session
// holds at most twice OutputLimit of output however much its commands
// print: the running command's and its predecessors'. Called with mu held.
func (s *Session) remember(c *Command) {
	historyBytes := s.opts.OutputLimit
	s.history = append(s.history, c)
	if len(s.history) > historySize {
		s.history[0] = nil
		s.history = s.history[1:]
	}
	kept := 0
	for i := len(s.history) - 1; i >= 0; i-- {
		old := s.history[i]
		if old == c {
			continue
		}
		old.proc.mu.Lock()
		if isClosed(old.done) {
			if kept+old.out.size > historyBytes {
				old.out.release()
			}
			kept += old.out.size
		}
		old.proc.mu.Unlock()
	}
}

// Start starts a command and returns at once. It fails with ErrBusy while
// another command runs or a request is being served.
func (s *Session) Start(ctx context.Context, text string) (*Command, error) {
	select {
	case s.sem <- struct{}{}:
	default:
		return nil, ErrBusy
	}
	defer s.release()
	p, err := s.ensureProcess(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	busy := s.last != nil && !isClosed(s.last.done)
	s.mu.Unlock()
	if busy {
		return nil, ErrBusy
	}
	s.mu.Lock()
	prev := s.last
	s.mu.Unlock()
	c := s.newCommand(p, text)
	c.heredocs, c.incomplete = examineInput(text)
	if err := p.run(c); err != nil {
		s.abandon(p, c, prev)
		return nil, err
	}
	return c, nil
}

// Command returns a remembered command by id.
func (s *Session) Command(id int64) (*Command, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.history {
		if c.ID == id {
			return c, true
		}
	}
	return nil, false
}

// Running returns the command that runs now, if any.
func (s *Session) Running() (*Command, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != nil && !isClosed(s.last.done) {
		return s.last, true
	}
	return nil, false
}

// Started returns when the session was created.
func (s *Session) Started() time.Time { return s.started }

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
			return p.write([]byte{0x03})
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
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return ErrClosed
	}
	return setWinsize(p.pty, rows, cols)
}

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
