package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hideKeyFromEnviron re-executes the server without SESSION_API_KEY in
// its environment. The kernel shows a process's first environment in
// /proc/PID/environ for as long as the process lives, to its own user and
// to root, and nothing a Go program does to its environment changes that:
// os.Unsetenv edits Go's copy only, and the Go runtime's strings point
// into the kernel's copy, so writing over it is not safe. The new image
// keeps the PID and argv and reads the key from a pipe it inherits
// (keyFDEnv). It returns only when there is nothing to hide or when the
// re-exec failed, which leaves the key where it was.
func hideKeyFromEnviron() error {
	key := os.Getenv(keyEnv)
	if key == "" || os.Getenv(keyFDEnv) != "" {
		return nil
	}
	if len(key) > maxKeyBytes {
		return fmt.Errorf("%s is longer than %d bytes", keyEnv, maxKeyBytes)
	}
	// No O_CLOEXEC: the new image inherits the read end. The key fits in
	// the pipe's buffer, so the write does not wait for a reader.
	var p [2]int
	if err := unix.Pipe2(p[:], 0); err != nil {
		return fmt.Errorf("pipe for the API key: %w", err)
	}
	_, err := unix.Write(p[1], []byte(key))
	unix.Close(p[1])
	if err != nil {
		unix.Close(p[0])
		return fmt.Errorf("pipe for the API key: %w", err)
	}
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, keyEnv+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, keyFDEnv+"="+strconv.Itoa(p[0]))
	err = unix.Exec(selfPath(), os.Args, env)
	unix.Close(p[0])
	return fmt.Errorf("re-execute without %s in the environment: %w", keyEnv, err)
}

// selfPath is the file to execute again: the one this process was started
// from, by the name it was started with, when that name still leads to
// it. The kernel names a process (comm, what ps and a container engine
// show) after the file executed, so /proc/self/exe, the fallback for a
// binary replaced or removed since, would rename the server "exe".
func selfPath() string {
	const self = "/proc/self/exe"
	me, err := os.Stat(self)
	if err != nil {
		return self
	}
	name := os.Args[0]
	if !strings.Contains(name, "/") {
		if name, err = exec.LookPath(name); err != nil {
			return self
		}
	}
	if fi, err := os.Stat(name); err == nil && os.SameFile(fi, me) {
		return name
	}
	return self
}

// inheritedKeyPipe returns the pipe hideKeyFromEnviron left for the
// server, for the PID-1 init to hand to the server it starts; nil when
// there is none.
func inheritedKeyPipe() *os.File {
	fd, err := strconv.Atoi(os.Getenv(keyFDEnv))
	if err != nil || fd < 3 {
		return nil
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "api-key-pipe")
}
