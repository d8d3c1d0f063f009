package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/internal/procgroup"
)

// Pipe mode: a command run outside the terminal, by `bash -c`, with its
// standard output and standard error on one pipe and its standard input
// empty. A terminal costs a great deal for bulk output: the tty layer moves
// about 10 MB/s here, a pipe over 400 MB/s, and the screen that turns
// terminal output into text costs more again. What a pipe loses is what a
// terminal gives: no prompt, so nothing persists (cd, variables); programs
// see no terminal (no colours, no progress bars, no line editing, stdio
// buffers in blocks); no input and no control keys.
//
// A piped command starts in the session's working directory as of its last
// prompt, with the environment the session started with (variables the
// shell exported since are not seen), as the session's user. It runs beside
// whatever runs in the terminal, and beside other piped commands; its
// output and state are read as any command's are (Command.Read, Status,
// Changed).

// PipeOptions adjust one piped command.
type PipeOptions struct {
	// Dir is where it starts; empty means the session's working directory.
	Dir string
	// Env adds to, or overrides, the session's environment.
	Env map[string]string
}

// pipeReadSize is the read buffer of a piped command's output, and
// pipeSize the kernel buffer asked for the pipe: with the default 64 KiB a
// command writing fast waits on the server's reads far more often.
const (
	pipeReadSize = 256 << 10
	pipeSize     = 1 << 20
)

// pipeSet tracks the process groups of a session's piped commands, to end
// them when the session closes: those of running commands, and those whose
// command exited while processes it started (`cmd &`, a daemon that
// forked) run on in its group. A group's id cannot be reused while
// anything is in the group, so signalling it reaches only what the command
// started; the orphan groups are pruned as they empty. What moved to a
// group of its own (`set -m`, setsid) is ended by the session's cgroup,
// where there is one.
type pipeSet struct {
	mu       sync.Mutex
	running  map[*Command]int // process group ids
	starting int              // commands between reserve and add
	orphans  map[int]struct{} // groups whose command exited, not yet empty
	closed   bool
}

// StartPipe starts text in pipe mode and returns at once; the command
// runs until it exits, whatever happens to ctx, which bounds only the
// start.
func (s *Session) StartPipe(ctx context.Context, text string, o PipeOptions) (*Command, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	dir := o.Dir
	if dir == "" {
		dir = s.cwd
	}
	meta := Metadata{ExitCode: -1, PID: -1, Username: s.initial.Username, Hostname: s.initial.Hostname, WorkingDir: dir}
	s.mu.Unlock()

	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	// A larger pipe buffer is an optimisation only: keep the default if
	// the system refuses (a limit on pipe memory per user).
	_, _ = fcntl(w, syscall.F_SETPIPE_SZ, pipeSize)
	if err := s.pipes.reserve(s.opts.MaxPipes); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	cmd, err := startIn(s.cg, s.log, func() *exec.Cmd {
		cmd := exec.Command(s.opts.Bash, "-c", text)
		cmd.Dir = dir
		cmd.Env = withEnv(s.opts.Env, o.Env)
		cmd.Stdout, cmd.Stderr = w, w // one pipe: output and errors in the order written
		// Its own process group, so a signal or the session's end
		// reaches what it starts too, and killed if the server dies. Not
		// its own terminal session: on a busy machine the scheduler's
		// autogroups then halve a bulk command's throughput (a session is
		// a group of its own).
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.opts.Credential}
		procgroup.Prepare(cmd)
		return cmd
	})
	w.Close()
	if err != nil {
		s.pipes.unreserve()
		r.Close()
		return nil, fmt.Errorf("start %q in %s: %w", text, dir, err)
	}

	// No terminal and no bash of the session's: the command's fields
	// have a lock of their own.
	c := &Command{Text: text, Started: time.Now(), out: newRing(s.opts.OutputLimit),
		done: make(chan struct{}), mu: new(sync.Mutex)}
	s.mu.Lock()
	s.nextID++
	c.ID = s.nextID
	s.remember(c)
	s.mu.Unlock()
	pgid := cmd.Process.Pid
	if !s.pipes.add(c, pgid) {
		// The session closed meanwhile.
		_ = procgroup.Kill(pgid, syscall.SIGKILL)
	}

	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		pipeReadLoop(r, c)
	}()
	go func() {
		err := cmd.Wait()
		// What it printed last may still be in the pipe; a background
		// child that keeps the pipe open is not waited for long.
		select {
		case <-readerDone:
		case <-time.After(drainOnExit):
			r.Close()
			<-readerDone
		}
		r.Close()
		s.pipes.finished(c, pgid)
		meta.ExitCode = exitStatus(cmd.ProcessState, err)
		c.mu.Lock()
		c.meta = meta
		c.finished = time.Now()
		close(c.done)
		c.notify()
		s.opts.Budget.add(c, c.out.size)
		c.mu.Unlock()
	}()
	return c, nil
}

// pipeReadLoop copies a piped command's output into c until the pipe ends
// or is closed.
func pipeReadLoop(r *os.File, c *Command) {
	buf := make([]byte, pipeReadSize)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.mu.Lock()
			c.out.Write(buf[:n])
			c.notify()
			c.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// SignalPipe sends sig to the process group of the piped command id.
func (s *Session) SignalPipe(id int64, sig syscall.Signal) error {
	c, ok := s.Command(id)
	if !ok {
		return fmt.Errorf("command %d: %w", id, ErrNotRunning)
	}
	pgid, ok := s.pipes.pgid(c)
	if !ok {
		return fmt.Errorf("command %d is not a running piped command: %w", id, ErrNotRunning)
	}
	if err := procgroup.Kill(pgid, sig); err != nil {
		return fmt.Errorf("signal command %d: %w", id, err)
	}
	return nil
}

// ErrTooManyPipes refuses a piped command while Options.MaxPipes of the
// session's run.
var ErrTooManyPipes = errors.New("too many piped commands run in this session")

// reserve takes a place for a command about to start, when fewer than max
// run (or start); unreserve gives it back if the start fails.
func (ps *pipeSet) reserve(max int) error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return ErrClosed
	}
	if len(ps.running)+ps.starting >= max {
		return fmt.Errorf("%w: at most %d at once; wait for one to end, or signal one", ErrTooManyPipes, max)
	}
	ps.starting++
	return nil
}

func (ps *pipeSet) unreserve() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.starting--
}

// add records a started command in the place reserve took; false means
// the session closed meanwhile.
func (ps *pipeSet) add(c *Command, pgid int) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.starting--
	if ps.closed {
		return false
	}
	if ps.running == nil {
		ps.running = map[*Command]int{}
	}
	ps.running[c] = pgid
	// Forget groups that emptied, so the set stays as small as what runs.
	for g := range ps.orphans {
		if !procgroup.Alive(g) {
			delete(ps.orphans, g)
		}
	}
	return true
}

// finished records that c's command exited; its group is kept while
// anything it started runs on in it.
func (ps *pipeSet) finished(c *Command, pgid int) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	delete(ps.running, c)
	if !procgroup.Alive(pgid) {
		return
	}
	if ps.closed {
		return // closeAll has it in its list
	}
	if ps.orphans == nil {
		ps.orphans = map[int]struct{}{}
	}
	ps.orphans[pgid] = struct{}{}
}

// byID returns the running piped command id.
func (ps *pipeSet) byID(id int64) (*Command, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for c := range ps.running {
		if c.ID == id {
			return c, true
		}
	}
	return nil, false
}

func (ps *pipeSet) pgid(c *Command) (int, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	pgid, ok := ps.running[c]
	return pgid, ok
}

// closeAll ends every process the session's piped commands started in
// their groups: SIGTERM, then SIGKILL for those still running when ctx
// ends. Later starts are refused.
func (ps *pipeSet) closeAll(ctx context.Context) {
	ps.mu.Lock()
	ps.closed = true
	groups := make(map[int]bool, len(ps.running)+len(ps.orphans))
	for _, g := range ps.running {
		groups[g] = true
	}
	for g := range ps.orphans {
		groups[g] = true
	}
	ps.orphans = nil
	ps.mu.Unlock()
	if len(groups) == 0 {
		return
	}
	signal := func(sig syscall.Signal) (left bool) {
		for g := range groups {
			if err := syscall.Kill(-g, sig); !errors.Is(err, syscall.ESRCH) {
				left = true
			}
		}
		return left
	}
	signal(syscall.SIGTERM)
	signal(syscall.SIGCONT) // a stopped process acts on SIGTERM once continued
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for signal(0) {
		select {
		case <-ctx.Done():
			signal(syscall.SIGKILL)
			return
		case <-tick.C:
		}
	}
}

// withEnv returns base with the variables of add set, in a stable order.
func withEnv(base []string, add map[string]string) []string {
	if len(add) == 0 {
		return base
	}
	out := make([]string, 0, len(base)+len(add))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := add[k]; !ok {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+add[k])
	}
	return out
}

// fcntl calls fcntl(2) with an integer argument.
func fcntl(f *os.File, cmd, arg int) (int, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var r uintptr
	var errno syscall.Errno
	if err := sc.Control(func(fd uintptr) {
		r, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, uintptr(cmd), uintptr(arg))
	}); err != nil {
		return 0, err
	}
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
