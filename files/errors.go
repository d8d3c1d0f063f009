package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// Error is a failure whose message is the exact text the agent sees: for
// Read and Write the content of an error observation, for the Editor the part
// after "ERROR:\n". Callers test for it with errors.As; any other error
// returned by this package is a fault of the server, not of the request.
type Error struct {
	Msg string
	// Err is the underlying cause, if any; it is not part of the message.
	Err error
}

func (e *Error) Error() string { return e.Msg }

func (e *Error) Unwrap() error { return e.Err }

func errorf(cause error, format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...), Err: cause}
}

// IsError reports whether err is (or wraps) an *Error and returns it.
func IsError(err error) (*Error, bool) {
	var fe *Error
	if errors.As(err, &fe) {
		return fe, true
	}
	return nil, false
}

// pyOSError renders err the way Python's str(OSError) does, for example
// "[Errno 2] No such file or directory: '/a/b'", because upstream messages
// embed that text and agents have learnt to read it.
func pyOSError(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	msg := pyStrerror(errno)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("[Errno %d] %s: %s", int(errno), msg, pyfmt.String(pe.Path))
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Sprintf("[Errno %d] %s: %s -> %s", int(errno), msg, pyfmt.String(le.Old), pyfmt.String(le.New))
	}
	return fmt.Sprintf("[Errno %d] %s", int(errno), msg)
}

// pyStrerror gives glibc's strerror text. Go's table has the same words
// with a lower-case first letter.
func pyStrerror(errno syscall.Errno) string {
	s := errno.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// pyStrerrorOf is pyStrerror for any error holding an errno.
func pyStrerrorOf(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return pyStrerror(errno)
	}
	return err.Error()
}
