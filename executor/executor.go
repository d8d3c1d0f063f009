// Package executor turns actions into observations. It owns one of each
// component (the shell sessions, the file editor, the browser, the
// plugins), runs each action on the right one, serves the named sessions
// of the native API (Session, Command), and keeps the bookkeeping the
// server reports (uptime, idle time). It speaks the components' results
// to its callers as event types and as its own plain values, which each
// front end maps to its wire format, and its errors are its own, each of
// a Kind. It knows nothing of HTTP, so tests and other programs can
// drive it in-process.
package executor

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/browser"
	"github.com/actionserver/actionserver/event"
	"github.com/actionserver/actionserver/files"
	"github.com/actionserver/actionserver/internal/asuser"
	"github.com/actionserver/actionserver/internal/chown"
	"github.com/actionserver/actionserver/mcp"
	"github.com/actionserver/actionserver/plugins"
	"github.com/actionserver/actionserver/shell"
	"github.com/actionserver/actionserver/shell/ohrun"
)

// DefaultSession is the name of the shell session that serves "run".
const DefaultSession = "default"

// Options configure an Executor.
type Options struct {
	// WorkDir is the workspace: the shells' initial directory.
	WorkDir string
	// Username is the sandbox user the shells run as.
	Username string
	// Credential switches to that user; nil runs as the server's user.
	// When the server is root, the file actions (read, write, edit,
	// uploads, downloads, listings, watches) and the browser's files then
	// take that user's filesystem rights too (see package asuser).
	Credential *syscall.Credential
	// Env is the shells' environment.
	Env []string
	// Shell holds further shell settings (timeouts, limits); its Dir, Env,
	// Credential and Logger are set from the fields above.
	Shell shell.Options
	// Run configures OpenHands' run policy over the shells: the no-change
	// timeout and how much of a command's output an observation shows.
	Run ohrun.Options
	// FileOwner receives the files and directories that write and the
	// editor's create make, and the browser's copies of downloads; the
	// zero value leaves them the server's.
	FileOwner chown.Owner
	// EnableBrowser reports whether browser actions are allowed.
	EnableBrowser bool
	// Browser configures the browser (its WorkDir defaults to WorkDir, its
	// FileOwner to FileOwner); Disabled is set from EnableBrowser.
	Browser browser.Options
	// Plugins are the started plugins (jupyter serves run_ipython); the
	// executor stops them on Close. Nil means none.
	Plugins *plugins.Set
	// MCPTimeout bounds one call to a stdio MCP server through the
	// proxy; default 120 s.
	MCPTimeout time.Duration
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
	// Started is when the server started, from which uptime and, until the
	// first action, idle time count; zero means now. The executor itself
	// starts later, after the user set-up and the plugins.
	Started time.Time
}

// Executor runs actions. Create it with New; it is safe for concurrent use.
// Actions on one shell session run one at a time; different sessions and
// other components run in parallel.
type Executor struct {
	opts    Options
	log     *slog.Logger
	started time.Time
	lastRun atomic.Int64 // unix nanos of the start of the last Execute

	browser  *browser.Browser
	editor   *files.Editor
	mcp      *mcp.Manager
	watchers files.Watchers
	// fsUser gives file actions the sandbox user's filesystem rights when
	// the server is root and the shells are not; nil otherwise.
	fsUser *asuser.User

	mu       sync.Mutex
	sessions map[string]*shell.Session
	starting map[string]bool // ids reserved while their shell starts
	closed   bool
	claim    claimed // what the sandbox's owner set (see Claim)
	// ohRunner is OpenHands' run policy over the default shell; replaced
	// when the default shell is (see runner).
	ohRunner *ohrun.Runner

	commands atomic.Int64 // commands started, in every session
	// startingWG counts the shells of CreateSession still starting; Close
	// waits for them, and quit, which it cancels, cuts their start short.
	startingWG sync.WaitGroup
	quit       context.Context
	stopQuit   context.CancelFunc

	defaultDone chan struct{} // closed once the default shell started or failed
	defaultErr  error         // why it failed; guarded by mu
	// restart is closed when a new start of the default shell, after a
	// failed one, ends; nil when none is under way. Guarded by mu.
	restart chan struct{}
	ctx     context.Context // bounds starts of the default shell
}

// New starts the default shell session and returns a ready Executor.
func New(ctx context.Context, opts Options) (*Executor, error) {
	e := Start(ctx, opts)
	if err := e.Ready(ctx); err != nil {
		e.Close(context.Background())
		return nil, err
	}
	return e, nil
}

// Start returns an Executor at once while its default shell starts in the
// background, bounded by ctx: bash takes a few milliseconds to come up,
// and a server can spend them accepting requests. Actions that need the
// default shell wait for it; Ready reports when it is up, or why it could
// not start.
func Start(ctx context.Context, opts Options) *Executor {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Started.IsZero() {
		opts.Started = time.Now()
	}
	e := &Executor{opts: opts, log: opts.Logger, started: opts.Started,
		sessions: map[string]*shell.Session{}, starting: map[string]bool{},
		defaultDone: make(chan struct{}), ctx: ctx}
	e.quit, e.stopQuit = context.WithCancel(context.Background())
	e.lastRun.Store(e.started.UnixNano())
	go e.startDefault(ctx)
	bo := opts.Browser
	if bo.WorkDir == "" {
		bo.WorkDir = opts.WorkDir
	}
	bo.Disabled = !opts.EnableBrowser
	if bo.FileOwner.IsKeep() {
		bo.FileOwner = opts.FileOwner
	}
	e.fsUser = fileUser(opts)
	e.watchers.As = e.fsUser
	if bo.FileUser == nil {
		bo.FileUser = e.fsUser
	}
	if bo.Logger == nil {
		bo.Logger = e.log
	}
	e.browser = browser.New(bo)
	e.editor = &files.Editor{WorkspaceRoot: opts.WorkDir, Owner: e.fileOwner()}
	e.mcp = e.newMCP()
	return e
}

// startDefault starts the default shell and records the outcome.
func (e *Executor) startDefault(ctx context.Context) {
	defer close(e.defaultDone)
	s, err := shell.Start(ctx, e.shellOptions(e.opts.WorkDir))
	e.mu.Lock()
	closed := e.closed
	switch {
	case err != nil:
		e.defaultErr = fmt.Errorf("start default shell: %w", err)
		e.log.Error("the default shell did not start", "error", err)
	case closed:
		e.defaultErr = ErrClosed
	default:
		e.sessions[DefaultSession] = s
	}
	e.mu.Unlock()
	if err == nil && closed {
		// Before defaultDone is closed: Close waits for it, and promises
		// that no shell outlives it.
		closeShell(context.Background(), s, time.Second)
	}
}

// Ready waits until the default shell is up; the error says why it could
// not start, or that ctx ended first.
func (e *Executor) Ready(ctx context.Context) error {
	select {
	case <-e.defaultDone:
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.defaultErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fileUser is whose filesystem rights the file actions take: the shells'
// user's, with new files given FileOwner's group natively.
func fileUser(opts Options) *asuser.User {
	c := opts.Credential
	if c == nil {
		return nil
	}
	fileGID := c.Gid
	if opts.FileOwner.GID() >= 0 {
		fileGID = uint32(opts.FileOwner.GID())
	}
	return asuser.ForFiles(c.Uid, c.Gid, fileGID, c.Groups)
}

// FileUser returns whose filesystem rights file access takes (nil: the
// server's own), for components outside the executor such as the file
// viewer.
func (e *Executor) FileUser() *asuser.User { return e.fsUser }

func (e *Executor) fileOwner() chown.Owner { return e.opts.FileOwner }

func (e *Executor) shellOptions(dir string) shell.Options {
	o := e.opts.Shell
	o.Dir = dir
	o.Env = e.claimedEnv()
	o.Credential = e.opts.Credential
	o.Logger = e.log
	return o
}

// Uptime returns how long the server has been up (see Options.Started).
func (e *Executor) Uptime() time.Duration { return time.Since(e.started) }

// IdleTime returns the time since the last Execute started.
func (e *Executor) IdleTime() time.Duration {
	return time.Since(time.Unix(0, e.lastRun.Load()))
}

// runner returns the run policy of sh, the default shell: one for the
// shell's life, since it keeps what the agent has seen.
func (e *Executor) runner(sh *shell.Session) *ohrun.Runner {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ohRunner == nil || e.ohRunner.Shell() != sh {
		e.ohRunner = ohrun.New(sh, e.opts.Run)
	}
	return e.ohRunner
}

// shell returns the shell of the named session. The default one is
// waited for while it starts, until ctx ends; if its start failed, it is
// started again (once, however many requests wait for it).
func (e *Executor) shell(ctx context.Context, name string) (*shell.Session, error) {
	if name == DefaultSession {
		select {
		case <-e.defaultDone:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e.mu.Lock()
	s, ok := e.sessions[name]
	switch {
	case ok:
		e.mu.Unlock()
		return s, nil
	case name == DefaultSession && e.defaultErr != nil && !e.closed && e.ctx.Err() == nil:
		if e.restart == nil {
			e.restart = make(chan struct{})
			e.startingWG.Add(1) // Close waits for it: e.closed is false
			go e.restartDefault(e.restart)
		}
		wait := e.restart
		e.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if s, ok := e.sessions[name]; ok {
			return s, nil
		}
		if e.defaultErr != nil {
			return nil, e.defaultErr
		}
		return nil, ErrClosed
	case name == DefaultSession && e.defaultErr != nil:
		e.mu.Unlock()
		return nil, e.defaultErr
	case name == DefaultSession || e.closed:
		e.mu.Unlock()
		return nil, ErrClosed
	}
	e.mu.Unlock()
	return nil, ErrSessionNotFound.withText("session %s not found", name)
}

// restartDefault starts the default shell again after a failed start, and
// closes done when it is up or failed once more. Close cuts it short and
// waits for it.
func (e *Executor) restartDefault(done chan struct{}) {
	defer e.startingWG.Done()
	defer close(done)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	defer context.AfterFunc(e.quit, cancel)()
	s, err := shell.Start(ctx, e.shellOptions(e.opts.WorkDir))
	e.mu.Lock()
	e.restart = nil
	closed := e.closed
	switch {
	case closed:
	case err != nil:
		e.defaultErr = fmt.Errorf("start default shell: %w", err)
		e.log.Error("the default shell did not start", "error", err)
	default:
		e.log.Info("the default shell started after an earlier failure")
		e.defaultErr = nil
		e.sessions[DefaultSession] = s
	}
	e.mu.Unlock()
	if err == nil && closed {
		closeShell(context.Background(), s, time.Second)
	}
}

// ShellState is the state of the default shell. Front ends map it to
// their wire names.
type ShellState int

// The states of the default shell.
const (
	ShellStarting ShellState = iota
	ShellReady
	ShellFailed
)

// ShellStatus is the default shell's state and, while it is failed or
// starting again after a failure, why its last start failed.
type ShellStatus struct {
	State ShellState
	// Error is empty unless a start failed.
	Error string
}

// ShellStatus reports the state of the default shell.
func (e *Executor) ShellStatus() ShellStatus {
	select {
	case <-e.defaultDone:
	default:
		return ShellStatus{State: ShellStarting}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.sessions[DefaultSession] != nil:
		return ShellStatus{State: ShellReady}
	case e.restart != nil && e.defaultErr != nil:
		return ShellStatus{State: ShellStarting, Error: e.defaultErr.Error()}
	case e.defaultErr != nil:
		return ShellStatus{State: ShellFailed, Error: e.defaultErr.Error()}
	}
	return ShellStatus{State: ShellFailed, Error: ErrClosed.Error()}
}

// cwd returns the default shell's working directory, against which
// relative paths of file actions resolve, once the shell is up (it waits
// until ctx ends); the workspace when there is no shell.
func (e *Executor) cwd(ctx context.Context) string {
	if s, err := e.shell(ctx, DefaultSession); err == nil {
		return s.Cwd()
	}
	return e.opts.WorkDir
}

// Execute runs one action. An error the agent can act on comes back as an
// observation; a returned error means the action could not be executed at
// all (an unsupported action, a server fault, or ctx ending).
func (e *Executor) Execute(ctx context.Context, a event.Action) (event.Observation, error) {
	e.lastRun.Store(time.Now().UnixNano())
	switch a := a.(type) {
	case *event.CmdRun:
		return e.run(ctx, a)
	case *event.IPythonRunCell:
		return e.runIPython(ctx, a)
	case *event.BrowseURL, *event.BrowseInteractive:
		return e.browse(ctx, a)
	case *event.FileRead:
		return e.read(ctx, a)
	case *event.FileWrite:
		return e.write(ctx, a)
	case *event.FileEdit:
		return e.edit(ctx, a)
	}
	return nil, fmt.Errorf("action type %s is not supported", a.Type())
}

// Close ends every shell session and what runs in them, the browser and
// the plugins. Processes get until ctx is done (at most a second when it
// has no deadline) to exit on their own before they are killed; plugins
// get a few seconds more to stop cleanly.
func (e *Executor) Close(ctx context.Context) {
	wait := grace(ctx, time.Second)
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.stopQuit()
	// Shells still starting are closed by whoever started them, who sees
	// e.closed; waiting for them here keeps Close's promise that no shell
	// of this executor outlives it, within the grace.
	starting := make(chan struct{})
	go func() { e.startingWG.Wait(); close(starting) }()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for _, done := range []<-chan struct{}{e.defaultDone, starting} {
		select {
		case <-done:
		case <-deadline.C:
		}
	}
	e.mu.Lock()
	sessions := e.sessions
	e.sessions = map[string]*shell.Session{}
	e.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := e.browser.Close(); err != nil {
			e.log.Warn("close browser", "error", err)
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		// A plugin that is cut off mid-stop leaves its processes behind,
		// so the stop is not cancelled with ctx.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait+pluginStopSlack)
		defer cancel()
		if err := e.opts.Plugins.Stop(pctx); err != nil {
			e.log.Warn("stop plugins", "error", err)
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.closeMCP(ctx, wait)
	}()
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			closeShell(ctx, s, wait)
		}()
	}
	wg.Wait()
	if err := e.editor.Close(); err != nil {
		e.log.Warn("close file editor", "error", err)
	}
}

// pluginStopSlack is how much longer than the shells' grace the plugins
// get to stop (a Jupyter server shuts its kernels down first).
const pluginStopSlack = 3 * time.Second

// grace returns the time left until ctx's deadline, or def when it has
// none; an ended ctx leaves none.
func grace(ctx context.Context, def time.Duration) time.Duration {
	if ctx.Err() != nil {
		return 0
	}
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), 0)
	}
	return def
}
