package swerex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/internal/procgroup"
	"github.com/actionserver/actionserver/internal/pyfmt"
)

// /execute runs a command as subprocess.run does upstream, outside any
// session, in pipe mode: no terminal, standard input empty, standard
// output and standard error on pipes of their own (or one, when merged),
// in a process group of its own so that a timeout ends everything it
// started.

// defaultExecPath is where Python looks for a program when the env it was
// given has no PATH (os.defpath).
const defaultExecPath = "/bin:/usr/bin"

// drainAfterExit bounds the wait for output after the program exited: a
// background child that keeps the pipe open is not waited for.
const drainAfterExit = time.Second

// execute runs req; limit bounds the bytes kept of each stream.
func execute(ctx context.Context, req executeRequest, argv []string, limit int) (executeResponse, error) {
	var resp executeResponse
	env := os.Environ()
	searchPath := os.Getenv("PATH")
	if req.Env != nil {
		env = make([]string, 0, len(req.Env))
		keys := make([]string, 0, len(req.Env))
		for k := range req.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+req.Env[k])
		}
		searchPath = defaultExecPath
		if p, ok := req.Env["PATH"]; ok {
			searchPath = p
		}
	}
	dir := ""
	if req.Cwd != nil {
		dir = *req.Cwd
		fi, err := os.Stat(dir)
		if err != nil {
			return resp, osError(err, dir)
		}
		if !fi.IsDir() {
			return resp, osError(syscall.ENOTDIR, dir)
		}
	}
	prog, err := lookPath(argv[0], searchPath, dir)
	if err != nil {
		return resp, err
	}

	outR, outW, err := os.Pipe()
	if err != nil {
		return resp, fmt.Errorf("pipe: %w", err)
	}
	defer outR.Close()
	errR, errW := outR, outW
	if !req.MergeOutputStreams {
		if errR, errW, err = os.Pipe(); err != nil {
			outW.Close()
			return resp, fmt.Errorf("pipe: %w", err)
		}
		defer errR.Close()
	}
	cmd := &exec.Cmd{Path: prog, Args: argv, Env: env, Dir: dir, Stdout: outW, Stderr: errW}
	// Its own group, so a timeout ends what it forked; gone with the server.
	procgroup.Prepare(cmd)
	err = cmd.Start()
	outW.Close()
	if errW != outW {
		errW.Close()
	}
	if err != nil {
		return resp, osError(err, argv[0])
	}

	stdout, stderr := &capped{limit: limit}, &capped{limit: limit}
	var readers sync.WaitGroup
	readers.Add(1)
	go func() { defer readers.Done(); _, _ = io.Copy(stdout, outR) }()
	if errR != outR {
		readers.Add(1)
		go func() { defer readers.Done(); _, _ = io.Copy(stderr, errR) }()
	}

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var deadline <-chan time.Time
	if req.Timeout != nil {
		t := time.NewTimer(seconds(*req.Timeout))
		defer t.Stop()
		deadline = t.C
	}
	timedOut := false
	select {
	case err = <-exited:
	case <-deadline:
		timedOut = true
	case <-ctx.Done():
	}
	if err == nil && (timedOut || ctx.Err() != nil) {
		_ = procgroup.Kill(cmd.Process.Pid, syscall.SIGKILL)
		err = <-exited
	}
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainAfterExit):
		// A child left in the background holds the pipes: stop reading.
		outR.Close()
		errR.Close()
		<-drained
	}
	resp.Stdout, resp.Stderr = stdout.text(), stderr.text()
	if timedOut {
		exc := newException(classCommandTimeout, "Timeout (%ss) exceeded while running command", pyfmt.Float(*req.Timeout))
		exc.ExtraInfo = map[string]any{"stdout": resp.Stdout, "stderr": resp.Stderr}
		return resp, exc
	}
	if ctx.Err() != nil {
		return resp, ctx.Err()
	}
	code := exitCode(cmd.ProcessState, err)
	resp.ExitCode = &code
	if req.Check && code != 0 {
		msg := fmt.Sprintf("Command %s failed with exit code %d. Stdout:\n%s\nStderr:\n%s",
			commandRepr(req.Command), code, pyfmt.String(resp.Stdout), pyfmt.String(resp.Stderr))
		if req.ErrorMsg != "" {
			msg = req.ErrorMsg + ": " + msg
		}
		return resp, &Exception{ClassPath: classNonZeroExit, Message: msg}
	}
	return resp, nil
}

// argvOf turns Command.command into the program's argv, as subprocess
// does: a string is one program name, or with shell a /bin/sh script; a
// list is the argv, or with shell the script and its arguments.
func argvOf(command any, shell bool) ([]string, bool) {
	var args []string
	switch v := command.(type) {
	case string:
		args = []string{v}
	case []any:
		for _, a := range v {
			s, ok := a.(string)
			if !ok {
				return nil, false
			}
			args = append(args, s)
		}
	default:
		return nil, false
	}
	if shell {
		return append([]string{"/bin/sh", "-c"}, args...), true
	}
	return args, len(args) > 0
}

// commandRepr is Python's repr of Command.command.
func commandRepr(command any) string {
	if s, ok := command.(string); ok {
		return pyfmt.String(s)
	}
	if l, ok := command.([]any); ok {
		return pyfmt.Repr(l)
	}
	return pyfmt.Repr(command)
}

// lookPath finds name as execvpe does in path; a name with a slash is
// taken as it is, relative to dir.
func lookPath(name, path, dir string) (string, error) {
	if name == "" {
		return "", osError(syscall.ENOENT, name)
	}
	if strings.Contains(name, "/") {
		p := name
		if dir != "" && !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", osError(err, name)
		}
		return p, nil
	}
	var firstErr error = syscall.ENOENT
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		err := executable(p)
		if err == nil {
			return p, nil
		}
		if errors.Is(err, syscall.EACCES) && errors.Is(firstErr, syscall.ENOENT) {
			firstErr = err
		}
	}
	return "", osError(firstErr, name)
}

// executable reports why p cannot be run, if it cannot.
func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return syscall.EACCES
	}
	return nil
}

// exitCode is subprocess's returncode: the exit status, or minus the
// signal that killed the program.
func exitCode(st *os.ProcessState, err error) int {
	if st == nil {
		return -1
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -int(ws.Signal())
	}
	return st.ExitCode()
}

// capped keeps the first limit bytes written to it and counts the rest,
// so a command printing without end cannot exhaust the server's memory.
type capped struct {
	mu      sync.Mutex
	buf     []byte
	limit   int
	dropped int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.limit - len(c.buf)
	if room >= len(p) {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if room > 0 {
		c.buf = append(c.buf, p[:room]...)
	}
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

func (c *capped) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := backslashReplace(c.buf)
	if c.dropped > 0 {
		s += fmt.Sprintf("\n[%d more bytes of output were not kept: the server keeps %d]", c.dropped, c.limit)
	}
	return s
}
