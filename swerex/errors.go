package swerex

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"reflect"
	"strings"
	"syscall"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// The Python classes the client re-raises, by the path it imports them
// from. Upstream raises each of them in the case named.
const (
	classCommandTimeout = "swerex.exceptions.CommandTimeoutError"
	classNonZeroExit    = "swerex.exceptions.NonZeroExitCodeError"
	classSyntax         = "swerex.exceptions.BashIncorrectSyntaxError"
	classSessionExists  = "swerex.exceptions.SessionExistsError"
	classNoSession      = "swerex.exceptions.SessionDoesNotExistError"
	classNoExitCode     = "swerex.exceptions.NoExitCodeError"
	classPexpectTimeout = "pexpect.exceptions.TIMEOUT" // interrupt and start-up give up
	classValueError     = "builtins.ValueError"
	classOSError        = "builtins.OSError"
	classFileNotFound   = "builtins.FileNotFoundError"
	classPermission     = "builtins.PermissionError"
	classIsADirectory   = "builtins.IsADirectoryError"
	classNotADirectory  = "builtins.NotADirectoryError"
	classFileExists     = "builtins.FileExistsError"
	classLookupError    = "builtins.LookupError"
	classUnicodeDecode  = "builtins.UnicodeDecodeError"
	classRuntimeError   = "builtins.RuntimeError"
)

// Exception is a runtime error as SWE-ReX transfers it: the client raises
// an instance of ClassPath with Message and sets its extra_info.
type Exception struct {
	ClassPath string
	Message   string
	ExtraInfo map[string]any
}

func (e *Exception) Error() string { return e.ClassPath + ": " + e.Message }

func newException(class, format string, args ...any) *Exception {
	return &Exception{ClassPath: class, Message: fmt.Sprintf(format, args...)}
}

// exceptionBody is the 511 reply. Traceback stays empty: the client logs a
// non-empty one as CRITICAL, and ours would show Go, not Python.
type exceptionBody struct {
	Swerexception struct {
		Message   string         `json:"message"`
		ClassPath string         `json:"class_path"`
		Traceback string         `json:"traceback"`
		ExtraInfo map[string]any `json:"extra_info"`
	} `json:"swerexception"`
}

// statusException is the status upstream answers a runtime error with, so
// the client re-raises it rather than treat it as a transport failure.
const statusException = 511

// raise answers err: an *Exception as it is, anything else as the
// RuntimeError it would have been upstream.
func raise(c *gin.Context, err error) {
	var exc *Exception
	if !errors.As(err, &exc) {
		exc = &Exception{ClassPath: classRuntimeError, Message: err.Error()}
	}
	var body exceptionBody
	body.Swerexception.Message = exc.Message
	body.Swerexception.ClassPath = exc.ClassPath
	body.Swerexception.ExtraInfo = exc.ExtraInfo
	if body.Swerexception.ExtraInfo == nil {
		body.Swerexception.ExtraInfo = map[string]any{}
	}
	c.AbortWithStatusJSON(statusException, body)
}

// detail answers an HTTP-level error in FastAPI's form.
func detail(c *gin.Context, status int, text string) {
	c.AbortWithStatusJSON(status, gin.H{"detail": text})
}

// invalid answers a request that does not validate, as FastAPI's 422 does:
// a list of problems, each with where (loc) and what (msg).
func invalid(c *gin.Context, kind string, loc []any, msg string) {
	c.AbortWithStatusJSON(http.StatusUnprocessableEntity, gin.H{"detail": []gin.H{{
		"type": kind, "loc": append([]any{"body"}, loc...), "msg": msg,
	}}})
}

// typeText words a value of the wrong JSON type as pydantic, which
// validates upstream's requests, does: its error type and message, in the
// terms of JSON, never the Go type the server decodes into.
func typeText(t reflect.Type) (kind, msg string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string_type", "Input should be a valid string"
	case reflect.Bool:
		return "bool_type", "Input should be a valid boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int_type", "Input should be a valid integer"
	case reflect.Float32, reflect.Float64:
		return "float_type", "Input should be a valid number"
	case reflect.Slice, reflect.Array:
		return "list_type", "Input should be a valid list"
	case reflect.Map, reflect.Struct:
		return "dict_type", "Input should be a valid dictionary"
	}
	return "value_error", "Input has the wrong type"
}

// fieldLoc turns encoding/json's dotted field path into the location's
// parts, as pydantic lists them.
func fieldLoc(field string) []any {
	if field == "" {
		return nil
	}
	var loc []any
	for _, p := range strings.Split(field, ".") {
		loc = append(loc, p)
	}
	return loc
}

// osError turns a file system error on path into the OSError subclass
// Python raises for the same errno, with Python's message:
// "[Errno 2] No such file or directory: '/x'".
func osError(err error, path string) *Exception {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		if errors.Is(err, fs.ErrNotExist) {
			errno = syscall.ENOENT
		} else {
			return &Exception{ClassPath: classOSError, Message: err.Error()}
		}
	}
	class := classOSError
	switch errno {
	case syscall.ENOENT:
		class = classFileNotFound
	case syscall.EACCES, syscall.EPERM:
		class = classPermission
	case syscall.EISDIR:
		class = classIsADirectory
	case syscall.ENOTDIR:
		class = classNotADirectory
	case syscall.EEXIST:
		class = classFileExists
	}
	return &Exception{ClassPath: class, Message: fmt.Sprintf("[Errno %d] %s: %s", int(errno), strerror(errno), pyfmt.String(path))}
}

// strerror is C's text for errno, which Go keeps in lower case.
func strerror(errno syscall.Errno) string {
	s := errno.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
