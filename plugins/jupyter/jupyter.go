// Package jupyter is the "jupyter" plugin: a Jupyter Server run as the
// sandbox user on a loopback port with a random token, and one IPython
// kernel behind it that runs the run_ipython cells.
package jupyter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/internal/freeport"
	"github.com/actionserver/actionserver/internal/procgroup"
	"github.com/actionserver/actionserver/plugins"
)

// Name is the plugin's name.
const Name = "jupyter"

// ServerBinEnv overrides where the Jupyter Server executable is.
const ServerBinEnv = "JUPYTER_SERVER_BIN"

// restartedNote starts the content of the first cell after the kernel
// died, so the agent knows its earlier state is gone.
const restartedNote = "[The IPython kernel had died and was restarted: variables, imports and other state from earlier cells are gone.]"

// Supervision timings.
const (
	stopGrace   = procgroup.Grace  // SIGTERM to SIGKILL when the server is ended
	restartWait = 60 * time.Second // a restarted server must answer within this
	// waitDelay bounds how long a dead server's output may stay open: its
	// kernels run in sessions of their own and can outlive it briefly, and
	// its death must be noticed without waiting for them.
	waitDelay = time.Second
)

// newBackoff is the restart policy: a server that dies as soon as it is up
// is restarted ever more slowly; one that stayed up a minute was healthy.
func newBackoff() procgroup.Backoff {
	return procgroup.Backoff{Min: 500 * time.Millisecond, Max: 30 * time.Second, StableAfter: time.Minute}
}

// errStopped is returned to a start or restart that Stop overtook.
var errStopped = errors.New("jupyter plugin stopped")

// serverRun is one run of the Jupyter Server, leading its process group.
type serverRun = procgroup.Group

// Plugin runs cells in a Jupyter kernel. Create it with New; Start it
// before use. Cells run one at a time.
type Plugin struct {
	hc *http.Client

	mu        sync.Mutex
	env       plugins.Env
	status    plugins.Status
	srv       *serverRun // the current run; nil once it has been ended
	base      string     // http://127.0.0.1:port
	token     string
	runtime   string        // the server's private runtime directory
	stopping  bool          // set by Stop; no server is launched after it
	quit      chan struct{} // closed by Stop
	superDone chan struct{} // closed when supervision ends; nil until it starts

	cell        sync.Mutex // held while a cell runs; guards what follows
	kernel      *kernel
	cwd         string // the directory last pushed to the kernel
	interpreter string
	initCells   []string
}

// New returns the plugin, not started.
func New() plugins.Plugin {
	return &Plugin{hc: newHTTPClient(), status: plugins.Status{Name: Name, State: plugins.StateStarting},
		quit: make(chan struct{})}
}

// Name implements plugins.Plugin.
func (p *Plugin) Name() string { return Name }

// Status implements plugins.Plugin.
func (p *Plugin) Status() plugins.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

func (p *Plugin) setState(st plugins.State, err error, port int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status.State, p.status.Port, p.status.Error = st, port, ""
	if err != nil {
		p.status.Error = err.Error()
	}
}

// serverBinary finds the Jupyter Server executable: the override, then
// the system's (Debian's kernelspec uses the system Python, which a
// python3 earlier on PATH may lack), then PATH.
func serverBinary(environ []string) (string, error) {
	if v := lookupEnv(environ, ServerBinEnv); v != "" {
		return v, nil
	}
	if _, err := os.Stat("/usr/bin/jupyter-server"); err == nil {
		return "/usr/bin/jupyter-server", nil
	}
	if p, err := exec.LookPath("jupyter-server"); err == nil {
		return p, nil
	}
	return "", errors.New("jupyter-server is not installed (set " + ServerBinEnv + " to its path)")
}

func lookupEnv(environ []string, key string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], key+"="); ok {
			return v
		}
	}
	return os.Getenv(key)
}

// Start launches Jupyter Server, starts the kernel and runs its set-up
// cells; it returns when a cell can run.
func (p *Plugin) Start(ctx context.Context, env plugins.Env) error {
	p.mu.Lock()
	p.env = env
	p.mu.Unlock()
	ctx, cancel := p.untilStop(ctx)
	defer cancel()
	r, err := p.launch(ctx)
	if err != nil {
		p.setState(plugins.StateFailed, err, 0)
		return err
	}
	p.cell.Lock()
	_, err = p.ensureKernel(ctx, env.WorkDir)
	p.cell.Unlock()
	if err != nil {
		p.endServer(context.WithoutCancel(ctx), r)
		p.cleanupRuntime()
		p.setState(plugins.StateFailed, err, 0)
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		return errStopped // r was current when Stop began, so Stop ends it
	}
	p.superDone = make(chan struct{})
	go p.supervise(r, p.superDone)
	p.status.State = plugins.StateReady
	return nil
}

// untilStop returns ctx that also ends, with errStopped as its cause, when
// Stop begins, so that a start or restart under way gives up at once.
func (p *Plugin) untilStop(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-p.quit:
			cancel(errStopped)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// launchTries is how many ports launch tries: another process can take
// the port it picked before the server listens on it.
const launchTries = 3

// errPortTaken is why a server exited during start-up when its port was
// found taken afterwards.
var errPortTaken = errors.New("its port was taken before it could listen on it")

// launch starts a Jupyter Server and waits until it answers. It launches
// nothing once Stop has begun.
func (p *Plugin) launch(ctx context.Context) (*serverRun, error) {
	bin, err := serverBinary(p.env.Environ)
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		port, err := freeport.Pick("127.0.0.1")
		if err != nil {
			return nil, err
		}
		r, err := p.launchOn(ctx, bin, port)
		if !errors.Is(err, errPortTaken) || try == launchTries {
			return r, err
		}
		p.env.Logger.Warn("jupyter server lost its port; trying another", "port", port, "error", err)
	}
}

// launchOn starts bin listening on port and waits until it answers.
func (p *Plugin) launchOn(ctx context.Context, bin string, port int) (*serverRun, error) {
	env := p.env
	token := newID()
	runtime, err := os.MkdirTemp("", "jupyter-runtime-")
	if err != nil {
		return nil, fmt.Errorf("jupyter runtime directory: %w", err)
	}
	if env.Credential != nil {
		os.Chown(runtime, int(env.Credential.Uid), int(env.Credential.Gid))
	}
	args := []string{"--no-browser", "--ServerApp.ip=127.0.0.1", "--ServerApp.port=" + strconv.Itoa(port),
		"--ServerApp.port_retries=0", "--ServerApp.token=" + token, "--ServerApp.root_dir=" + env.WorkDir}
	if runsAsRoot(env) {
		args = append(args, "--allow-root")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = env.WorkDir
	cmd.Env = append(append([]string{}, env.Environ...), "JUPYTER_RUNTIME_DIR="+runtime)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: env.Credential}
	logw := plugins.LineLogger(env.Logger, "jupyter server", serverLogLevel)
	cmd.Stdout, cmd.Stderr = logw, logw
	cmd.WaitDelay = waitDelay

	// Started under the lock, so that Stop, which sets stopping under it,
	// either prevents the launch or finds the run in p.srv and ends it.
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		os.RemoveAll(runtime)
		return nil, errStopped
	}
	r, err := procgroup.Start(cmd)
	if err != nil {
		p.mu.Unlock()
		os.RemoveAll(runtime)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	p.srv, p.base, p.token, p.runtime = r, base, token, runtime
	p.status.Port = port
	p.mu.Unlock()

	fail := func(err error) (*serverRun, error) {
		p.endServer(context.WithoutCancel(ctx), r)
		p.cleanupRuntime()
		return nil, err
	}
	probe := &kernel{base: base, token: token, hc: p.hc}
	for delay := 20 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := probe.api(actx, http.MethodGet, "/api/status", nil, nil)
		cancel()
		if err == nil {
			env.Logger.Info("jupyter server ready", "port", port, "pid", cmd.Process.Pid)
			return r, nil
		}
		select {
		case <-r.Exited():
			err := fmt.Errorf("jupyter server exited during start-up (%s); see the server log", r.ProcessState())
			if freeport.Check("127.0.0.1", port) != nil {
				err = fmt.Errorf("%w: %w", err, errPortTaken)
			}
			return fail(err)
		case <-ctx.Done():
			return fail(fmt.Errorf("jupyter server not ready: %w (last error: %v)", context.Cause(ctx), err))
		case <-time.After(delay):
		}
	}
}

// serverLogLevel shows the server's errors as warnings, the rest (request
// logs) at debug level.
func serverLogLevel(line string) slog.Level {
	if strings.HasPrefix(line, "[E ") || strings.HasPrefix(line, "[C ") || strings.Contains(line, "Traceback") {
		return slog.LevelWarn
	}
	return slog.LevelDebug
}

func runsAsRoot(env plugins.Env) bool {
	if env.Credential != nil {
		return env.Credential.Uid == 0
	}
	return os.Getuid() == 0
}

// supervise restarts the Jupyter Server, with backoff, each time it exits
// on its own, until Stop. r is the run that is up.
func (p *Plugin) supervise(r *serverRun, done chan struct{}) {
	defer close(done)
	backoff := newBackoff()
	for {
		select {
		case <-p.quit:
			return
		case <-r.Exited():
		}
		_ = r.Signal(syscall.SIGKILL) // helpers it left behind
		p.forget(r)
		p.cleanupRuntime()
		reason := fmt.Errorf("jupyter server exited (%s)", r.ProcessState())
		delay := backoff.Next(time.Since(r.Started()))
		p.env.Logger.Warn("jupyter server exited; restarting", "state", r.ProcessState().String(), "after", delay)
		p.setState(plugins.StateRestarting, reason, 0)
		for {
			select {
			case <-p.quit:
				return
			case <-time.After(delay):
			}
			next, err := p.relaunch()
			if errors.Is(err, errStopped) {
				return
			}
			if err == nil {
				r = next
				break
			}
			p.env.Logger.Warn("jupyter server restart failed", "error", err)
			p.setState(plugins.StateRestarting, fmt.Errorf("%v; restart failed: %w", reason, err), 0)
			delay = backoff.Next(0)
		}
		p.mu.Lock()
		if !p.stopping {
			p.status.State, p.status.Error = plugins.StateReady, ""
		}
		p.mu.Unlock()
	}
}

// relaunch launches a new server in place of one that died.
func (p *Plugin) relaunch() (*serverRun, error) {
	ctx, cancel := p.untilStop(context.Background())
	defer cancel()
	ctx, cancelWait := context.WithTimeout(ctx, restartWait)
	defer cancelWait()
	r, err := p.launch(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	stopping := p.stopping
	p.mu.Unlock()
	if stopping {
		// Stop ends it too, having found it in p.srv; ending it here as
		// well keeps a stop that raced the launch from depending on that.
		p.endServer(context.Background(), r)
		return nil, errStopped
	}
	return r, nil
}

// Interpreter returns the kernel's Python executable.
func (p *Plugin) Interpreter() string {
	p.cell.Lock()
	defer p.cell.Unlock()
	return p.interpreter
}

// AddInitCell runs code in the kernel now and again after every kernel
// restart (agent_skills' import uses this).
func (p *Plugin) AddInitCell(ctx context.Context, code string) error {
	p.cell.Lock()
	defer p.cell.Unlock()
	p.initCells = append(p.initCells, code)
	if p.kernel == nil {
		return nil
	}
	outs, _, err := p.kernel.execute(ctx, code)
	if err != nil {
		return err
	}
	if text := joinText(outs); strings.Contains(text, "Error") {
		return fmt.Errorf("init cell failed: %s", strings.TrimSpace(sgr().ReplaceAllString(text, "")))
	}
	return nil
}

func joinText(outs []output) string {
	var b strings.Builder
	for _, o := range outs {
		b.WriteString(o.text)
	}
	return b.String()
}

// ensureKernel returns a live kernel, starting one (and running the set-up
// cells) when there is none or the last one died; restarted reports the
// latter. The caller holds p.cell.
func (p *Plugin) ensureKernel(ctx context.Context, cwd string) (restarted bool, err error) {
	if p.kernel != nil && p.kernel.alive() {
		return false, nil
	}
	p.mu.Lock()
	base, token, srv, stopping := p.base, p.token, p.srv, p.stopping
	p.mu.Unlock()
	if stopping {
		return false, errStopped
	}
	restarting := errors.New("jupyter server is restarting; try again shortly")
	if srv == nil {
		return false, restarting
	}
	select {
	case <-srv.Exited():
		return false, restarting
	default:
	}
	hadKernel := p.kernel != nil
	if hadKernel {
		// Jupyter Server restarts a dead kernel in place; start afresh
		// either way so the connection and set-up are known good.
		p.kernel.shutdown(ctx)
		p.kernel = nil
	}
	k, err := startKernel(ctx, base, token, p.hc)
	if err != nil {
		return false, err
	}
	setup := []string{`%colors nocolor`, `import sys; print(sys.executable)`, chdirCode(cwd)}
	for i, code := range append(setup, p.initCells...) {
		outs, _, err := k.execute(ctx, code)
		if err != nil {
			k.shutdown(context.WithoutCancel(ctx))
			return false, fmt.Errorf("set up kernel: %w", err)
		}
		if i == 1 {
			p.interpreter = strings.TrimSpace(joinText(outs))
		}
	}
	p.kernel, p.cwd = k, cwd
	return hadKernel, nil
}

// chdirCode is the cell that moves the kernel to dir.
func chdirCode(dir string) string {
	q, _ := json.Marshal(dir)
	return "import os; os.chdir(" + string(q) + ")"
}

// RunCell runs one run_ipython cell: the kernel first follows the shell's
// directory, then runs the code; ctx and the cell's timeout bound it.
func (p *Plugin) RunCell(ctx context.Context, c Cell) (Result, error) {
	p.cell.Lock()
	defer p.cell.Unlock()
	restarted, err := p.ensureKernel(ctx, c.Cwd)
	if err != nil {
		return Result{}, err
	}
	note := ""
	if restarted {
		note = restartedNote
	}
	if c.Cwd != "" && c.Cwd != p.cwd {
		if _, _, err := p.kernel.execute(ctx, chdirCode(c.Cwd)); err != nil {
			return Result{}, fmt.Errorf("follow the shell's directory: %w", err)
		}
		p.cwd = c.Cwd
	}
	cctx := ctx
	if c.Timeout != nil && *c.Timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, time.Duration(*c.Timeout*float64(time.Second)))
		defer cancel()
	}
	outs, timedOut, err := p.kernel.execute(cctx, c.Code)
	switch {
	case errors.Is(err, errKernelDied):
		// The next cell starts a fresh kernel and says so; this one
		// reports what it printed before the kernel went away.
		outs = append(outs, output{text: "\n[The IPython kernel died while running this cell; it will be restarted for the next one.]"})
	case err != nil:
		return Result{}, err
	case timedOut && ctx.Err() != nil:
		return Result{}, ctx.Err() // the request itself ended, not the cell's timeout
	}
	return content(c, outs, timedOut, note, p.interpreter), nil
}

// Stop ends the kernel and the Jupyter Server, also when the server is
// being restarted, and waits for them and for supervision until ctx ends.
// The server's process group has been sent SIGKILL by the time Stop
// returns, whether or not it exited in time.
func (p *Plugin) Stop(ctx context.Context) error {
	p.mu.Lock()
	if !p.stopping {
		p.stopping = true
		close(p.quit)
	}
	done := p.superDone
	p.mu.Unlock()
	if p.cell.TryLock() {
		if p.kernel != nil {
			kctx, cancel := context.WithTimeout(ctx, stopGrace)
			p.kernel.shutdown(kctx)
			cancel()
			p.kernel = nil
		}
		p.cell.Unlock()
	}
	p.mu.Lock()
	srv := p.srv
	p.mu.Unlock()
	err := p.endServer(ctx, srv)
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			err = errors.Join(err, fmt.Errorf("jupyter supervision did not end: %w", ctx.Err()))
		}
	}
	p.cleanupRuntime()
	return err
}

// endServer ends r's process group (the server ends its kernels on
// SIGTERM) and waits for it until ctx ends.
func (p *Plugin) endServer(ctx context.Context, r *serverRun) error {
	if r == nil {
		return nil
	}
	if err := r.Stop(ctx, stopGrace); err != nil {
		return fmt.Errorf("end jupyter server: %w", err)
	}
	p.forget(r)
	return nil
}

// forget drops r, which has exited, so that its process group id, which
// the system may give to another process, is never signalled again.
func (p *Plugin) forget(r *serverRun) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv == r {
		p.srv = nil
	}
}

func (p *Plugin) cleanupRuntime() {
	p.mu.Lock()
	dir := p.runtime
	p.runtime = ""
	p.mu.Unlock()
	if dir != "" && strings.HasPrefix(filepath.Base(dir), "jupyter-runtime-") {
		os.RemoveAll(dir)
	}
}
