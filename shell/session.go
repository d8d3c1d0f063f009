package shell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Options configure a Session. The zero value runs bash from PATH as the
// server's own user, in the server's working directory, with its
// environment.
type Options struct {
	// Dir is the initial working directory.
	Dir string
	// Env is the shell's environment; nil means the server's.
	Env []string
	// Credential runs the shell as another user; nil means the server's.
	Credential *syscall.Credential
	// Bash is the bash executable (4.4 or later); default "bash" from PATH.
	Bash string
	// TempDir holds the per-session files; default os.TempDir().
	TempDir string
	// Rows and Cols are the terminal size; default 1000 by 1000, as wide as
	// OpenHands' terminal so programs do not cut lines to fit.
	Rows, Cols uint16
	// OutputLimit is how many bytes of each command's output are kept;
	// default 8 MiB. Older bytes are dropped.
	OutputLimit int
	// Logger receives the session's diagnostics; default slog.Default().
	Logger *slog.Logger
	// Budget, when set, bounds the finished commands' output across every
	// session sharing it; nil means no bound beyond OutputLimit.
	Budget *OutputBudget
	// StartTimeout bounds a shell's start-up, until its first prompt: bash
	// runs the user's start-up files first, and a command in them that
	// waits (a lock, the network, input) would otherwise hold every
	// request; default 30s. A start that fails this way returns an error
	// that matches ErrStartTimeout.
	StartTimeout time.Duration
	// MaxPipes bounds the piped commands that run at once in the
	// session (StartPipe); default 64. More are refused with
	// ErrTooManyPipes.
	MaxPipes int
	// Cgroups, when set, puts each session in a cgroup of its own, so
	// that closing it ends what escaped its terminal session and process
	// groups (setsid); nil: none.
	Cgroups *Cgroups
}

func (o *Options) setDefaults() error {
	if o.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("working directory: %w", err)
		}
		o.Dir = wd
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Bash == "" {
		path, err := exec.LookPath("bash")
		if err != nil {
			return fmt.Errorf("find bash: %w", err)
		}
		o.Bash = path
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	if o.Rows == 0 {
		o.Rows = 1000
	}
	if o.Cols == 0 {
		o.Cols = 1000
	}
	if o.OutputLimit <= 0 {
		o.OutputLimit = 8 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.MaxPipes <= 0 {
		o.MaxPipes = DefaultMaxPipes
	}
	return nil
}

// DefaultMaxPipes is Options.MaxPipes's default.
const DefaultMaxPipes = 64

// DefaultStartTimeout is Options.StartTimeout's default.
const DefaultStartTimeout = 30 * time.Second

// ErrStartTimeout is matched by the error of a shell that did not reach its
// first prompt within Options.StartTimeout. A later start may succeed.
var ErrStartTimeout = errors.New("the shell did not start in time")

// ErrClosed is returned by a closed Session.
var ErrClosed = errors.New("shell session is closed")

// ErrNoPTY is returned when a new shell cannot start because the system has
// no pseudo-terminal left; ending another session frees one.
var ErrNoPTY = errors.New("no pseudo-terminal available")

// Session is a persistent interactive bash on a terminal. Commands run one
// at a time; state (directory, variables, functions, aliases) persists
// between them. If bash dies, the next request starts a new one in the last
// known directory (see Turn.TakeRestarts).
type Session struct {
	opts Options
	log  *slog.Logger
	sem  chan struct{} // one request at a time

	// mu guards the fields below. It may be held while a process's mu is
	// taken, never the other way round.
	mu     sync.Mutex
	proc   *process
	cwd    string
	closed bool
	// restarts are the shells replaced since a policy last took them.
	restarts []Restart
	// restarting is set while a dead bash is replaced, s.proc being nil
	// meanwhile; see ensureProcess.
	restarting *restart
	nextID     int64
	last       *Command
	gen        int64 // changes with last; see Turn.Last
	initial    Metadata
	history    []*Command // recent commands, oldest first
	started    time.Time

	pipes pipeSet        // piped commands running (see StartPipe)
	cg    *sessionCgroup // nil when sessions are not put in cgroups
}

// Start starts a session and waits until bash is ready for commands.
func Start(ctx context.Context, opts Options) (*Session, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	s := &Session{opts: opts, log: opts.Logger, sem: make(chan struct{}, 1), cwd: opts.Dir, started: time.Now()}
	cg, err := opts.Cgroups.newSession()
	if err != nil {
		// Processes are still tracked by session and group.
		s.log.Warn("session started without a cgroup", "error", err)
	}
	s.cg = cg
	p, err := startProcess(ctx, &s.opts, s.cwd, s.log, s.cg)
	if err != nil {
		s.cg.close(noGrace())
		return nil, err
	}
	s.proc = p
	p.mu.Lock()
	s.initial = p.prompt
	p.mu.Unlock()
	if s.initial.WorkingDir != "" {
		s.cwd = s.initial.WorkingDir
	}
	return s, nil
}

// Started returns when the session was created.
func (s *Session) Started() time.Time { return s.started }

// Cwd returns the shell's working directory as of its last prompt.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// PID returns the pid of the current bash, or 0 when there is none.
func (s *Session) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.pid
}

// Close ends bash and every process of its terminal session: they are
// asked to end, and those still running when ctx is done are killed.
func (s *Session) Close(ctx context.Context) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	p := s.proc
	s.proc = nil
	r := s.restarting
	s.mu.Unlock()
	if r != nil {
		// The restart closes what it started once it sees closed.
		r.cancel()
		<-r.done
	}
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		s.pipes.closeAll(ctx)
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		if p != nil {
			p.close(ctx)
		}
	}()
	// What left both (setsid) is still in the cgroup.
	s.cg.close(ctx)
	<-done
	<-done
}

// acquire waits for the session to be free of other requests.
func (s *Session) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release ends the request acquire let in.
func (s *Session) release() { <-s.sem }

// ensureProcess returns the session's bash, replacing it first if it died.
// The request holds on to the returned process: Close may clear s.proc at
// any time. Only a request that holds the request lock calls it, so one
// restart at most runs at a time.
//
// A restart can take as long as bash's start-up files (StartTimeout), so it
// runs without mu: meanwhile s.proc is nil and restarting is set, and Cwd,
// PID, the file actions and Close go on. Close cancels the restart and
// waits for it.
func (s *Session) ensureProcess(ctx context.Context) (*process, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	old := s.proc
	if old.alive() && !old.reaped() {
		s.mu.Unlock()
		return old, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	s.proc = nil
	s.restarting = &restart{cancel: cancel, done: done}
	opts, dir := s.opts, s.cwd
	s.mu.Unlock()

	p, dir, err := s.restart(ctx, old, &opts, dir)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.restarting = nil
	if s.closed {
		if p != nil {
			p.close(noGrace())
		}
		return nil, ErrClosed
	}
	if err != nil {
		// The dead one stays, so the next request tries again.
		s.proc = old
		return nil, err
	}
	if s.opts.Rows != opts.Rows || s.opts.Cols != opts.Cols {
		// Resized while it started.
		_ = setWinsize(p.pty, s.opts.Rows, s.opts.Cols)
	}
	s.log.Warn("shell exited; started a new one", "status", old.exitStatus, "dir", dir)
	s.proc = p
	s.cwd = dir
	s.restarts = append(s.restarts, Restart{Status: old.exitStatus, Dir: dir})
	if len(s.restarts) > maxRestarts {
		s.restarts = s.restarts[len(s.restarts)-maxRestarts:]
	}
	return p, nil
}

// restart is a restart of the shell in progress.
type restart struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when it is over, started or not
}

// restart ends old, a bash that died, and starts a new one in dir, or in
// the session's first directory if dir is gone, which it returns. Called
// without mu.
func (s *Session) restart(ctx context.Context, old *process, opts *Options, dir string) (*process, string, error) {
	// A bash that was just killed is reported dead only once its last
	// output is drained; wait for that rather than refuse this action
	// because the command it was running seems to run still.
	select {
	case <-old.exited:
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	old.close(noGrace()) // end what it left behind before a pid can be reused
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = opts.Dir
	}
	p, err := startProcess(ctx, opts, dir, s.log, s.cg)
	if err != nil {
		return nil, "", fmt.Errorf("restart shell: %w", err)
	}
	return p, dir, nil
}
