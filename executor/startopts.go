package executor

import (
	"errors"
	"os"
	"strings"
)

// ErrBadStartOptions: the directory or the environment a session or a
// piped command was asked to start with cannot be used. Without this
// check the start fails with the system's words (a missing directory
// reads as "fork/exec /usr/bin/bash: no such file or directory") and as
// the server's fault.
var ErrBadStartOptions = sentinel(KindInvalid, errors.New("invalid cwd or env"))

// checkStartOptions refuses a cwd that is not a directory or holds a NUL
// byte, and env names that are empty or hold '=' or NUL, and values that
// hold NUL: no process can be started with them.
func checkStartOptions(cwd string, env map[string]string) error {
	if cwd != "" {
		if strings.ContainsRune(cwd, 0) {
			return ErrBadStartOptions.withText("cwd must not contain NUL bytes")
		}
		fi, err := os.Stat(cwd)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return ErrBadStartOptions.withText("cwd %q: no such directory", cwd)
		case err == nil && !fi.IsDir():
			return ErrBadStartOptions.withText("cwd %q is not a directory", cwd)
		}
	}
	for k, v := range env {
		switch {
		case k == "" || strings.ContainsAny(k, "=\x00"):
			return ErrBadStartOptions.withText("env: %q is not a variable name (empty, or holds '=' or NUL)", k)
		case strings.ContainsRune(v, 0):
			return ErrBadStartOptions.withText("env: the value of %s holds a NUL byte", k)
		}
	}
	return nil
}
