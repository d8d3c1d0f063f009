package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/actionserver/actionserver/shell"
)

// MaxSessions bounds the shells one executor runs at once.
const MaxSessions = 128

// Errors of the session API.
var (
	ErrSessionExists   = errors.New("a session with this id exists")
	ErrSessionNotFound = errors.New("no session with this id")
	ErrTooManySessions = fmt.Errorf("at most %d sessions may run at once", MaxSessions)
	ErrDefaultSession  = errors.New("the default session serves run actions and cannot be deleted")
	ErrBadSessionID    = errors.New("a session id is 1 to 64 letters, digits, '.', '_' or '-'")
)

var sessionID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// SessionOptions configure a new session.
type SessionOptions struct {
	// ID names the session; empty picks one.
	ID string
	// Cwd is its starting directory; empty means the workspace.
	Cwd string
	// Env adds to (or overrides) the shells' environment.
	Env map[string]string
}

// NamedSession is a session with its id.
type NamedSession struct {
	ID      string
	Session *shell.Session
}

// CreateSession starts a new shell session.
func (e *Executor) CreateSession(ctx context.Context, o SessionOptions) (NamedSession, error) {
	id := o.ID
	if id == "" {
		b := make([]byte, 6)
		if _, err := rand.Read(b); err != nil {
			return NamedSession{}, fmt.Errorf("session id: %w", err)
		}
		id = "s-" + hex.EncodeToString(b)
	} else if !sessionID.MatchString(id) {
		return NamedSession{}, ErrBadSessionID
	}
	e.mu.Lock()
	switch {
	case e.closed:
		e.mu.Unlock()
		return NamedSession{}, ErrClosed
	case e.sessions[id] != nil || e.starting[id]:
		e.mu.Unlock()
		return NamedSession{}, ErrSessionExists
	case len(e.sessions)+len(e.starting) >= MaxSessions:
		e.mu.Unlock()
		return NamedSession{}, ErrTooManySessions
	}
	e.starting[id] = true // reserve the id while bash starts
	e.mu.Unlock()

	opts := e.shellOptions(e.opts.WorkDir)
	if o.Cwd != "" {
		opts.Dir = o.Cwd
	}
	if len(o.Env) > 0 {
		opts.Env = mergeEnv(opts.Env, o.Env)
	}
	s, err := shell.Start(ctx, opts)

	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.starting, id)
	if err != nil {
		return NamedSession{}, err
	}
	if e.closed {
		go closeShell(s, time.Second)
		return NamedSession{}, ErrClosed
	}
	e.sessions[id] = s
	return NamedSession{ID: id, Session: s}, nil
}

// DeleteSession ends a session's shell and every process it started.
func (e *Executor) DeleteSession(id string) error {
	if id == DefaultSession {
		return ErrDefaultSession
	}
	e.mu.Lock()
	s, ok := e.sessions[id]
	delete(e.sessions, id)
	e.mu.Unlock()
	if !ok {
		return ErrSessionNotFound
	}
	closeShell(s, time.Second)
	return nil
}

// Sessions lists the sessions, the default one first, then by id.
func (e *Executor) Sessions() []NamedSession {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]NamedSession, 0, len(e.sessions))
	for id, s := range e.sessions {
		out = append(out, NamedSession{ID: id, Session: s})
	}
	slices.SortFunc(out, func(a, b NamedSession) int {
		switch {
		case a.ID == DefaultSession:
			return -1
		case b.ID == DefaultSession:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
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

// closeShell ends a shell session, giving its processes grace to end.
func closeShell(s *shell.Session, grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	s.Close(ctx)
}
