package shell

import (
	"context"
	"time"
)

// A Turn is one request's hold on a session: the per-session request lock,
// taken with the shell that was live when it was taken (a dead one is
// replaced first). A policy over the engine (OpenHands' run, SWE-ReX's
// run_in_session) starts a command, types into it and reads it through its
// turn, so nothing else starts a command in between. Release ends it.
type Turn struct {
	s *Session
	p *process
}

// Acquire waits for the session to be free of other requests, until ctx
// ends, and returns the request's turn. A bash that died is replaced
// first (see Restarts).
func (s *Session) Acquire(ctx context.Context) (*Turn, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	return s.bind(ctx)
}

// TryAcquire is Acquire without the wait: it fails with ErrBusy while
// another request is served.
func (s *Session) TryAcquire(ctx context.Context) (*Turn, error) {
	select {
	case s.sem <- struct{}{}:
	default:
		return nil, ErrBusy
	}
	return s.bind(ctx)
}

// bind ends the acquiring of a turn: the request holds the lock.
func (s *Session) bind(ctx context.Context) (*Turn, error) {
	p, err := s.ensureProcess(ctx)
	if err != nil {
		s.release()
		return nil, err
	}
	return &Turn{s: s, p: p}, nil
}

// Release ends the turn. The turn must not be used after.
func (t *Turn) Release() { t.s.release() }

// Last returns the session's last command started in the terminal (nil
// before the first) and its generation, a number that changes whenever
// another command becomes the last one, even one that failed to start: a
// policy keeps what it showed of a command under the generation it saw.
func (t *Turn) Last() (*Command, int64) {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	return t.s.last, t.s.gen
}

// Begin runs text as a new command and returns at once. The caller has
// checked that no command runs.
func (t *Turn) Begin(text string) (*Command, error) {
	return t.begin(text, func(c *Command) error { return t.p.run(c) })
}

// BeginKey sends a control key ("C-c") to the shell at its prompt, tracked
// as a command named after the key, which ends at the next prompt. It
// waits, until ctx ends, for bash to read: a signal while it still prints
// its prompt would be swallowed.
func (t *Turn) BeginKey(ctx context.Context, name string) (*Command, error) {
	key, ok := specialKey(name)
	if !ok {
		return nil, ErrUnknownKey
	}
	return t.begin(name, func(c *Command) error { return t.p.sendKeyAtPrompt(ctx, c, key) })
}

func (t *Turn) begin(text string, send func(*Command) error) (*Command, error) {
	t.s.mu.Lock()
	prev := t.s.last
	t.s.mu.Unlock()
	c := t.s.newCommand(t.p, text)
	if err := send(c); err != nil {
		t.s.abandon(t.p, c, prev)
		return nil, err
	}
	return c, nil
}

// Write types b into the terminal of the turn's shell, whatever runs.
func (t *Turn) Write(b []byte) error { return t.p.write(b) }

// Foreground returns the process group in the foreground of the turn's
// terminal, the shell's own (ShellPID) included.
func (t *Turn) Foreground() (int, error) { return foregroundPgrp(t.p.pty) }

// ShellPID returns the pid of the turn's bash.
func (t *Turn) ShellPID() int { return t.p.pid }

// LastOutput returns when the turn's terminal last printed anything, or
// when its shell started.
func (t *Turn) LastOutput() time.Time { return time.Unix(0, t.p.lastOutput.Load()) }

// SetCwd records dir as the shell's directory, as a policy learnt it from
// a finished command it reported: Cwd returns it, and a restarted shell
// starts there.
func (t *Turn) SetCwd(dir string) {
	if dir == "" {
		return
	}
	t.s.mu.Lock()
	t.s.cwd = dir
	t.s.mu.Unlock()
}

// Cwd is Session.Cwd.
func (t *Turn) Cwd() string { return t.s.Cwd() }

// Restart is a shell that died and was replaced.
type Restart struct {
	// Status is the dead bash's exit status (128+signal when killed).
	Status int
	// Dir is where the new one started.
	Dir string
}

// maxRestarts bounds the restarts kept for TakeRestarts.
const maxRestarts = 16

// TakeRestarts returns the restarts since the last call, oldest first, so
// a policy can tell its agent; at most the last maxRestarts are kept.
func (t *Turn) TakeRestarts() []Restart {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	r := t.s.restarts
	t.s.restarts = nil
	return r
}
