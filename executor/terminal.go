package executor

import "github.com/actionserver/actionserver/shell"

// Attach connects a terminal to the session: it receives the shell's raw
// output (escape sequences and all) and types into it.
func (s *Session) Attach() (*Terminal, error) {
	sub, unsubscribe, err := s.sh.AttachRaw()
	if err != nil {
		return nil, ErrRefused.with(err)
	}
	return &Terminal{sub: sub, unsubscribe: unsubscribe, sh: s.sh}, nil
}

// Terminal is a person's terminal attached to a session. Close it when
// done.
type Terminal struct {
	sub         *shell.RawSubscriber
	unsubscribe func()
	sh          *shell.Session
}

// Output delivers the shell's output unprocessed. It is closed when the
// terminal falls too far behind (Dropped then reports it), is closed, or
// the shell ends; a stalled terminal never holds up the shell.
func (t *Terminal) Output() <-chan []byte { return t.sub.C }

// Dropped reports, once Output is closed, that the terminal was dropped for
// falling behind.
func (t *Terminal) Dropped() bool { return t.sub.Dropped }

// Write types b into the shell's terminal, as a keyboard would.
func (t *Terminal) Write(b []byte) error { return t.sh.WriteRaw(b) }

// Resize sets the terminal size (see Session.Resize).
func (t *Terminal) Resize(rows, cols uint16) error {
	if rows == 0 || cols == 0 {
		return ErrBadSize
	}
	return controlError(t.sh.Resize(rows, cols))
}

// Close detaches the terminal.
func (t *Terminal) Close() { t.unsubscribe() }
