package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/shell"
)

// The named sessions: shells besides the one that serves "run" actions,
// where commands start without waiting, their output is read by offset
// and they are controlled while they run. The HTTP server's /sessions
// routes are one way in; tests and other programs drive them in-process.

// MaxSessions bounds the shells one executor runs at once.
const MaxSessions = 128

// Errors of the sessions.
var (
	ErrSessionExists   = sentinel(KindConflict, errors.New("a session with this id exists"))
	ErrSessionNotFound = sentinel(KindNotFound, errors.New("no session with this id"))
	ErrTooManySessions = sentinel(KindLimit, fmt.Errorf("at most %d sessions may run at once", MaxSessions))
	ErrDefaultSession  = sentinel(KindInvalid, errors.New("the default session serves run actions and cannot be deleted"))
	ErrBadSessionID    = sentinel(KindInvalid, errors.New("a session id is 1 to 64 letters, digits, '.', '_' or '-', and not '.' or '..'"))
	// ErrNoPTY: the system has no pseudo-terminal left for a new shell;
	// ending another session frees one.
	ErrNoPTY        = sentinel(KindUnavailable, shell.ErrNoPTY)
	ErrEmptyCommand = sentinel(KindInvalid, errors.New("command must not be empty"))
	// ErrBusy: a command runs already (or a run action is being served).
	ErrBusy          = sentinel(KindConflict, shell.ErrBusy)
	ErrNotRunning    = sentinel(KindConflict, shell.ErrNotRunning)
	ErrUnknownKey    = sentinel(KindInvalid, shell.ErrUnknownKey)
	ErrUnknownSignal = sentinel(KindInvalid, errors.New("signal must be SIGINT, SIGTERM or SIGKILL"))
	ErrBadSize       = sentinel(KindInvalid, errors.New("rows and cols must be positive"))
	// ErrRefused: the session's state refuses a control request for
	// another reason (its shell is gone, the command cannot take a signal).
	ErrRefused = sentinel(KindConflict, errors.New("the session refused the request"))
)

// validSessionID reports whether id is 1 to 64 letters, digits, '.', '_'
// or '-', and not "." or "..", which no URL path can reach: clients
// resolve them away. (A regexp with {1,64} compiles to 64 copies of its
// class at start-up, a fifth of a millisecond.)
func validSessionID(id string) bool {
	if len(id) == 0 || len(id) > 64 || id == "." || id == ".." {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// SessionOptions configure a new session.
type SessionOptions struct {
	// ID names the session; empty picks one.
	ID string
	// Cwd is its starting directory; empty means the workspace.
	Cwd string
	// Env adds to (or overrides) the shells' environment.
	Env map[string]string
}

// Session is one of the executor's named shells. The default session is
// the one that serves "run" actions. A Session stays usable after it is
// deleted; its shell then refuses.
type Session struct {
	id string
	e  *Executor
	sh *shell.Session
}

// CreateSession starts a new shell session.
func (e *Executor) CreateSession(ctx context.Context, o SessionOptions) (*Session, error) {
	id := o.ID
	if id == "" {
		b := make([]byte, 6)
		if _, err := rand.Read(b); err != nil {
			return nil, startFailed(fmt.Errorf("session id: %w", err))
		}
		id = "s-" + hex.EncodeToString(b)
	} else if !validSessionID(id) {
		return nil, ErrBadSessionID
	}
	if err := checkStartOptions(o.Cwd, o.Env); err != nil {
		return nil, err
	}
	e.mu.Lock()
	switch {
	case e.closed:
		e.mu.Unlock()
		return nil, startFailed(ErrClosed)
	case e.sessions[id] != nil || e.starting[id]:
		e.mu.Unlock()
		return nil, ErrSessionExists
	case len(e.sessions)+len(e.starting) >= MaxSessions:
		e.mu.Unlock()
		return nil, ErrTooManySessions
	}
	e.starting[id] = true // reserve the id while bash starts
	e.startingWG.Add(1)   // before Close can wait: e.closed is false
	e.mu.Unlock()
	defer e.startingWG.Done()
	// Close cuts a start short rather than wait for it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.quit, cancel)()

	opts := e.shellOptions(e.workDir())
	if o.Cwd != "" {
		opts.Dir = o.Cwd
	}
	if len(o.Env) > 0 {
		opts.Env = mergeEnv(opts.Env, o.Env)
	}
	s, err := shell.Start(ctx, opts)

	e.mu.Lock()
	delete(e.starting, id)
	closed := e.closed
	if err == nil && !closed {
		e.sessions[id] = s
	}
	e.mu.Unlock()
	switch {
	case closed:
		if err == nil {
			closeShell(context.Background(), s, time.Second) // Close waits for this
		}
		return nil, startFailed(ErrClosed)
	case err != nil:
		return nil, startFailed(err)
	}
	return &Session{id: id, e: e, sh: s}, nil
}

// startFailed says that a session could not start, and why.
func startFailed(err error) error {
	err = fmt.Errorf("could not start the session: %w", err)
	if errors.Is(err, shell.ErrNoPTY) {
		return ErrNoPTY.with(err)
	}
	return err
}

// DeleteSession ends a session's shell and every process it started. The
// processes get a second to exit on their own, or until ctx ends if that
// comes first.
func (e *Executor) DeleteSession(ctx context.Context, id string) error {
	if id == DefaultSession {
		return ErrDefaultSession
	}
	e.mu.Lock()
	s, ok := e.sessions[id]
	delete(e.sessions, id)
	e.mu.Unlock()
	if !ok {
		return ErrSessionNotFound.withText("session %s not found", id)
	}
	closeShell(ctx, s, time.Second)
	return nil
}

// Session returns the session with that id; the default one once it has
// started (see Ready). The error says why there is none: ErrSessionNotFound
// for an id never created or deleted, the start's own error for a default
// shell that failed to start, ErrClosed once the executor is closing, or
// ctx's error.
func (e *Executor) Session(ctx context.Context, id string) (*Session, error) {
	s, err := e.shell(ctx, id)
	if err != nil {
		return nil, err
	}
	return &Session{id: id, e: e, sh: s}, nil
}

// Sessions lists the sessions, the default one first, then by id. While
// the default one starts, it waits for it until ctx ends.
func (e *Executor) Sessions(ctx context.Context) []*Session {
	_ = e.Ready(ctx) // a default shell that failed is not listed
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*Session, 0, len(e.sessions))
	for id, s := range e.sessions {
		out = append(out, &Session{id: id, e: e, sh: s})
	}
	slices.SortFunc(out, func(a, b *Session) int {
		switch {
		case a.id == DefaultSession:
			return -1
		case b.id == DefaultSession:
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
	return out
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// SessionInfo describes a named session. Front ends map it to their wire
// format.
type SessionInfo struct {
	ID      string
	Cwd     string
	Started time.Time
	PID     int
	// RunningCommand is the command that runs now; nil when none.
	RunningCommand *CommandBrief
}

// CommandBrief names a running command.
type CommandBrief struct {
	ID      int64
	Command string
	Started time.Time
}

// Info describes the session.
func (s *Session) Info() SessionInfo {
	info := SessionInfo{ID: s.id, Cwd: s.sh.Cwd(), Started: s.sh.Started(), PID: s.sh.PID()}
	if c, ok := s.sh.Running(); ok {
		info.RunningCommand = &CommandBrief{ID: c.ID, Command: c.Text, Started: c.Started}
	}
	return info
}

// Delete ends the session (see Executor.DeleteSession).
func (s *Session) Delete(ctx context.Context) error { return s.e.DeleteSession(ctx, s.id) }

// Start starts a command and returns at once; it fails with ErrBusy while
// another command runs.
func (s *Session) Start(ctx context.Context, command string) (*Command, error) {
	if strings.TrimSpace(command) == "" {
		return nil, ErrEmptyCommand
	}
	c, err := s.sh.Start(ctx, command)
	if err == nil {
		s.e.commands.Add(1)
	}
	if errors.Is(err, shell.ErrBusy) {
		return nil, ErrBusy.with(err)
	}
	if err != nil {
		// Its text goes to the client as it is, unwrapped.
		return nil, err
	}
	return &Command{session: s.id, c: c}, nil
}

// Command returns one of the commands the session remembers (the most
// recent few dozen) by id.
func (s *Session) Command(id int64) (*Command, bool) {
	c, ok := s.sh.Command(id)
	if !ok {
		return nil, false
	}
	return &Command{session: s.id, c: c}, true
}

// Input types text into the running command, followed by Enter when enter
// is set.
func (s *Session) Input(text string, enter bool) error {
	return controlError(s.sh.Input(text, enter))
}

// Key sends a control key ("C-c", "C-d", ...) to the running command.
func (s *Session) Key(name string) error { return controlError(s.sh.Key(name)) }

var signals = map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL}

// Signal sends SIGINT, SIGTERM or SIGKILL (named with or without "SIG", in
// any case) to the running command's process group; the shell survives.
func (s *Session) Signal(name string) error {
	sig, err := signalByName(name)
	if err != nil {
		return err
	}
	return controlError(s.sh.Signal(sig))
}

// signalByName resolves a signal name as Signal takes it.
func signalByName(name string) (syscall.Signal, error) {
	name = strings.ToUpper(name)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	sig, ok := signals[name]
	if !ok {
		return 0, ErrUnknownSignal
	}
	return sig, nil
}

// Resize sets the terminal size; programs get SIGWINCH.
func (s *Session) Resize(rows, cols uint16) error {
	if rows == 0 || cols == 0 {
		return ErrBadSize
	}
	return controlError(s.sh.Resize(rows, cols))
}

// controlError gives the shell's answer to a control request its kind. A
// request the session's state refuses for any other reason (its shell is
// gone, the terminal cannot be written) is a conflict too: it is the
// session's state, not the server, that fails.
func controlError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, shell.ErrUnknownKey):
		return ErrUnknownKey.with(err)
	case errors.Is(err, shell.ErrNotRunning):
		return ErrNotRunning.with(err)
	}
	return ErrRefused.with(err)
}

// mergeEnv returns base with the entries of add set.
func mergeEnv(base []string, add map[string]string) []string {
	out := make([]string, 0, len(base)+len(add))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := add[k]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range add {
		out = append(out, k+"="+v)
	}
	return out
}

// closeShell ends a shell session: its processes get until ctx is done,
// and at most grace, to end on their own before they are killed.
func closeShell(ctx context.Context, s *shell.Session, grace time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	s.Close(ctx)
}

// Foreground returns the process group of the running command's job, or 0
// when the shell itself runs it (a builtin); ErrNotRunning when idle.
func (s *Session) Foreground() (int, error) {
	pgrp, err := s.sh.Foreground()
	if err != nil {
		return 0, controlError(err)
	}
	return pgrp, nil
}

// ShellPID returns the pid of the session's bash, or 0 when there is none.
func (s *Session) ShellPID() int { return s.sh.PID() }
