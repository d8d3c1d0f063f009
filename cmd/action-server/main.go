// Command action-server runs inside a sandbox and executes the actions an
// agent host sends it over HTTP. See README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/browser"
	"github.com/actionserver/actionserver/executor"
	"github.com/actionserver/actionserver/internal/chown"
	"github.com/actionserver/actionserver/internal/serverflags"
	"github.com/actionserver/actionserver/plugins"
	"github.com/actionserver/actionserver/server"
	"github.com/actionserver/actionserver/shell"
	"github.com/actionserver/actionserver/shell/ohrun"
)

// version is stamped at build time.
var version = "dev"

// defaultPath is the PATH of a process started without one, as Debian's
// login gives root.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// shutdownGrace is how long commands get to end after SIGTERM before they
// are killed; the whole shutdown stays within five seconds.
const shutdownGrace = 2 * time.Second

func main() {
	if len(os.Args) > 1 && os.Args[1] == fileEditorCommand {
		os.Exit(runFileEditor(os.Stdin, os.Stdout))
	}
	if serverflags.IsSwerex(os.Args[0]) {
		os.Exit(runSwerexRemote(os.Args[1:]))
	}
	// SWE-ReX's key is its --auth-token; SESSION_API_KEY is ours alone.
	if err := hideKeyFromEnviron(); err != nil {
		fmt.Fprintf(os.Stderr, "action-server: %v: /proc/%d/environ still shows the API key\n", err, os.Getpid())
	}
	args, err := serverflags.ServerArgs(os.Args[0], os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "action-server (as %s): %v\n", filepath.Base(os.Args[0]), err)
		os.Exit(2)
	}
	if os.Getpid() == 1 && os.Getenv(initChildEnv) == "" {
		os.Exit(runAsInit(args))
	}
	os.Exit(run(args))
}

func run(args []string) int {
	start := time.Now()
	// A container started with an empty environment (or `env -i`) has no
	// PATH; bash, the shell's commands and the plugins need one.
	if os.Getenv("PATH") == "" {
		os.Setenv("PATH", defaultPath)
	}
	cfg, err := serverflags.Parse(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "action-server: %v\n\n%s", err, serverflags.Usage)
		return 2
	}
	if cfg.ShowHelp {
		fmt.Print(serverflags.Usage)
		return 0
	}
	if cfg.ShowVersion {
		fmt.Println("action-server", version)
		return 0
	}
	log := newLogger()
	// First: nothing started from here on may inherit the key.
	key, err := loadAPIKey(cfg, log)
	if err != nil {
		log.Error("start-up failed", "error", err)
		return 1
	}
	apiKey := key.key
	fleet, err := readFleetConfig()
	if err != nil {
		log.Error("start-up failed", "error", err)
		return 1
	}
	set, err := pluginRegistry(cfg.Host).New(cfg.Plugins)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	if len(cfg.Plugins) == 0 {
		set = nil
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go stopOnSignal(stop)

	// bash takes longest to come up: the default shell starts first, and
	// everything else happens while it does. Until the port is open the
	// host's readiness probe is refused, which it retries, as upstream's
	// port opens only after its own set-up.
	timeouts, err := readTimeouts()
	if err != nil {
		log.Error("start-up failed", "error", err)
		return 1
	}
	sb, err := prepareSandbox(cfg, log)
	if err != nil {
		log.Error("start-up failed", "error", err)
		return 1
	}
	opts := sb.executorOptions(cfg, timeouts, start, set, log)
	cgroups, err := shell.NewCgroups()
	if err != nil {
		// Without, processes that call setsid outlive their session.
		log.Debug("sessions are not put in cgroups", "reason", err)
	} else {
		log.Debug("each session has a cgroup", "below", cgroups.Dir())
	}
	opts.Shell.Cgroups = cgroups
	defer func() {
		if err := cgroups.Close(); err != nil {
			log.Warn("shutdown", "error", err)
		}
	}()
	exec := executor.Start(ctx, opts)
	// Agents find it through browser.ServerURLFile; it answers on loopback
	// only, under a token its URL carries, and reads files with the
	// sandbox user's rights. Only the browser can use it, so it runs only
	// with the browser, and is up before the server reports ready.
	urlFile := browser.ServerURLFile
	if v, ok := os.LookupEnv("FILE_VIEWER_URL_FILE"); ok {
		urlFile = v // several servers on one machine need their own
	}
	viewerStarted := make(chan *browser.FileViewer, 1)
	go func() {
		if !cfg.EnableBrowser {
			viewerStarted <- nil
			return
		}
		viewer, err := browser.StartFileViewer(cfg.Port, "", exec.FileUser(), log)
		if err != nil {
			log.Warn("file viewer not started", "error", err)
		} else if urlFile != "" {
			if err := writeURLFile(urlFile, viewer.URL); err != nil {
				log.Warn("file viewer: its address is not written; set FILE_VIEWER_URL_FILE to a file of this server's",
					"file", urlFile, "reason", err.Error())
			}
		}
		viewerStarted <- viewer
	}()
	defer func() {
		if viewer := <-viewerStarted; viewer != nil {
			viewer.Close()
		}
	}()

	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Error("listen", "addr", addr, "error", err)
		exec.Close(context.Background())
		return 1
	}
	if exposedWithoutKey(cfg.Host, apiKey) && fleet.initToken == "" {
		log.Warn("listening on a non-loopback address without SESSION_API_KEY: anyone who can reach it can run commands", "addr", addr)
	}
	srv := server.New(server.Options{APIKey: apiKey, AllowedOrigins: cfg.AllowOrigins, AllowedHosts: cfg.AllowHosts, Logger: log,
		InitToken: fleet.initToken, OpenMetrics: fleet.openMetrics, MCP: exec.MCP()})
	if key.generated {
		printGeneratedKey(os.Stderr, apiKey)
	}
	httpSrv := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 30 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(ln) }()

	// Plugins take seconds; meanwhile /alive answers 503 and /server_info
	// shows their states.
	if set != nil {
		srv.ShowStarting(func() []executor.PluginStatus { return executor.PluginStatuses(set) })
		if err := startPlugins(ctx, set, sb.pluginEnv(log), log); err != nil {
			log.Error("start-up failed", "error", err)
			shutdown(httpSrv, exec, log)
			return 1
		}
	}
	viewer := <-viewerStarted
	viewerStarted <- viewer // for the deferred Close
	// Requests are taken while the default shell starts: the few that
	// need it wait for it, the rest need not (see executor.Start).
	srv.SetReady(exec)
	shellUp := make(chan error, 1)
	go func() { shellUp <- exec.Ready(ctx) }()
	code := serveUntilEnd(ctx, shellUp, serveErr, log, func() {
		log.Info("ready", "addr", ln.Addr().String(), "version", version, "startup", time.Since(start))
	})
	drainAndShutdown(srv, httpSrv, exec, fleet.drainHold, log)
	return code
}

// stopOnSignal calls stop on SIGTERM or SIGINT, and keeps catching them
// until the process ends. It runs beside start-up: setting up the catching
// starts a thread, half a millisecond that readiness need not wait for (a
// signal in that first millisecond ends the process at once).
func stopOnSignal(stop context.CancelFunc) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	stop()
}

// serveUntilEnd waits for a signal, the server's failure or the default
// shell's failure to start, and returns the exit status; ready is called
// once the shell is up.
func serveUntilEnd(ctx context.Context, shellUp <-chan error, serveErr <-chan error, log *slog.Logger, ready func()) int {
	for {
		select {
		case err := <-shellUp:
			shellUp = nil
			switch {
			case err == nil:
				ready()
			case errors.Is(err, shell.ErrStartTimeout):
				// Its start-up files hang (the executor logged why):
				// the server stays up, the next action that needs the
				// shell starts it again and reports the failure.
			case ctx.Err() == nil:
				log.Error("start-up failed", "error", err)
				return 1
			}
		case <-ctx.Done():
			log.Info("shutting down")
			return 0
		case err := <-serveErr:
			log.Error("serve", "error", err)
			return 1
		}
	}
}

// sandbox is what start-up prepared for the shells and plugins: the user
// they run as, the workspace and their environment.
type sandbox struct {
	user    *sandboxUser
	workDir string
	env     []string
}

// prepareSandbox finds or creates the user and prepares the workspace.
func prepareSandbox(cfg serverflags.Config, log *slog.Logger) (*sandbox, error) {
	u, err := setupUser(cfg.Username, cfg.UserID, log)
	if err != nil {
		return nil, err
	}
	workDir := cfg.WorkDir
	if workDir == "" {
		if workDir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
	}
	if workDir, err = filepath.Abs(workDir); err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	if err := setupWorkDir(workDir, u, os.Getenv("SANDBOX_GROUP_ID")); err != nil {
		return nil, err
	}
	if cfg.EnableBrowser {
		// Downloads land here; upstream creates it at start, and agents
		// (and the host's tests) see it as a hidden entry of the workspace.
		dl := filepath.Join(workDir, ".downloads")
		if err := os.MkdirAll(dl, 0o775); err == nil && os.Getuid() == 0 {
			_ = os.Chown(dl, u.UID, u.GID)
		}
	}
	return &sandbox{user: u, workDir: workDir, env: shellEnv(u)}, nil
}

// timeouts are the ones the environment may set; zero means the default.
type timeouts struct {
	noChange   time.Duration // NO_CHANGE_TIMEOUT_SECONDS
	mcpCall    time.Duration // MCP_CALL_TIMEOUT
	shellStart time.Duration // SHELL_START_TIMEOUT_SECONDS
}

// readTimeouts reads the timeouts from the environment; a value that is
// not a positive number of seconds is an error.
func readTimeouts() (timeouts, error) {
	var t timeouts
	for _, v := range []struct {
		name string
		to   *time.Duration
	}{{"NO_CHANGE_TIMEOUT_SECONDS", &t.noChange}, {"MCP_CALL_TIMEOUT", &t.mcpCall}, {"SHELL_START_TIMEOUT_SECONDS", &t.shellStart}} {
		s := os.Getenv(v.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return t, fmt.Errorf("%s=%q is not a positive integer", v.name, s)
		}
		*v.to = time.Duration(n) * time.Second
	}
	return t, nil
}

// executorOptions configures the executor from the flags, the environment
// and the sandbox; set holds the plugins, which may start later.
func (sb *sandbox) executorOptions(cfg serverflags.Config, t timeouts, started time.Time, set *plugins.Set, log *slog.Logger) executor.Options {
	budget := cfg.OutputBudget
	if budget == 0 {
		budget = serverflags.DefaultOutputBudget
	}
	var owner chown.Owner // keep: only root can give files away at all
	if os.Getuid() == 0 {
		// Upstream gives new files <uid>:<uid>, whatever the user's
		// primary group.
		owner = chown.To(sb.user.UID, sb.user.UID)
	}
	shellOpts := shell.Options{Logger: log, OutputLimit: cfg.OutputBuffer, Budget: shell.NewOutputBudget(int64(budget)),
		StartTimeout: t.shellStart}
	return executor.Options{
		Started:       started,
		WorkDir:       sb.workDir,
		Username:      sb.user.Name,
		Credential:    sb.user.Credential,
		FileOwner:     owner,
		Env:           sb.env,
		Shell:         shellOpts,
		Run:           ohrun.Options{NoChangeTimeout: t.noChange},
		EnableBrowser: cfg.EnableBrowser,
		Browser:       browser.Options{Eager: cfg.BrowserEager},
		Plugins:       set,
		MCPTimeout:    t.mcpCall,
		Logger:        log,
	}
}

// pluginEnv is what the plugins start with.
func (sb *sandbox) pluginEnv(log *slog.Logger) plugins.Env {
	u := sb.user
	return plugins.Env{
		Username: u.Name, UID: u.UID, GID: u.GID, Home: u.Home, Credential: u.Credential,
		WorkDir: sb.workDir, Environ: sb.env, Logger: log,
	}
}

// shutdown stops accepting requests, ends running commands (which lets
// their requests finish) and returns within about five seconds.
func shutdown(httpSrv *http.Server, exec *executor.Executor, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- httpSrv.Shutdown(ctx) }()
	closeCtx, closeCancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer closeCancel()
	exec.Close(closeCtx)
	if err := <-done; err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Warn("shutdown", "error", err)
	}
	httpSrv.Close()
}

func newLogger() *slog.Logger {
	level := slog.LevelInfo
	switch strings.ToLower(os.Getenv("LOG_LEVEL")) {
	case "debug":
		level = slog.LevelDebug
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	if d := strings.ToLower(os.Getenv("DEBUG")); d == "1" || d == "true" {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	switch os.Getenv("LOG_JSON") {
	case "1", "true", "True":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
