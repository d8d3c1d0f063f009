package executor

import (
	"errors"
	"fmt"
)

// Kind says what sort of failure an executor error is, so a caller can
// answer each sort its own way (the HTTP server picks a status by it). The
// executor itself knows nothing of HTTP.
type Kind int

// Error kinds.
const (
	// KindInternal is a fault of the server or the machine, or an error
	// that has no kind.
	KindInternal Kind = iota
	// KindInvalid is a request that is malformed (a bad id, an empty
	// command, an unknown key or signal).
	KindInvalid
	// KindNotFound is a request for something that does not exist.
	KindNotFound
	// KindConflict is a request that does not fit the current state (the
	// id is taken, a command runs already, none runs).
	KindConflict
	// KindLimit is a request over a cap (sessions, watches).
	KindLimit
	// KindUnavailable is a request that cannot be served now: for want of a
	// resource that ending something else frees (a pseudo-terminal), or
	// because the executor is shutting down.
	KindUnavailable
	// KindNoSpace is a write the disk has no room for.
	KindNoSpace
	// KindPermission is an operation the file system's permissions refuse.
	KindPermission
	// KindTooLarge is a request whose content is over a size limit (an
	// archive that unpacks to too much).
	KindTooLarge
)

// Error is an error of the executor: its kind, and the error that says what
// went wrong (whose text is the Error's). Errors of one sentinel (such as
// ErrBusy) may differ in text; errors.Is matches them to the sentinel.
type Error struct {
	Kind Kind
	Err  error
	// of is the sentinel this error is an instance of; nil for a sentinel.
	of *Error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the cause, so errors.Is also finds the components' errors.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether e is an instance of the sentinel target.
func (e *Error) Is(target error) bool { return e.of != nil && target == e.of }

// sentinel returns a sentinel error of a kind.
func sentinel(kind Kind, cause error) *Error { return &Error{Kind: kind, Err: cause} }

// with returns an instance of the sentinel s whose text and cause is err.
func (s *Error) with(err error) *Error { return &Error{Kind: s.Kind, Err: err, of: s} }

// withText returns an instance of the sentinel s that reads as the text.
func (s *Error) withText(format string, args ...any) *Error {
	return s.with(fmt.Errorf(format, args...))
}

// KindOf returns the kind of err: that of the first executor Error in its
// chain, KindInternal when there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// ErrClosed is returned after Close. A request that races shutdown is not
// the server's fault, so it is of KindUnavailable, not KindInternal.
var ErrClosed = sentinel(KindUnavailable, errors.New("executor is closed"))
