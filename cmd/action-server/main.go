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

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/browser"
	"github.com/actionserver/actionserver/executor"
	"github.com/actionserver/actionserver/internal/chown"
	"github.com/actionserver/actionserver/internal/serverflags"
	"github.com/actionserver/actionserver/plugins"
	"github.com/actionserver/actionserver/server"
	"github.com/actionserver/actionserver/shell"
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
	args := os.Args[1:]
	if serverflags.IsLauncher(os.Args[0]) {
		var err error
		if args, err = serverflags.FromLauncher(args); err != nil {
			fmt.Fprintf(os.Stderr, "action-server (as %s): %v\n", filepath.Base(os.Args[0]), err)
			os.Exit(2)
		}
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
	if err := pluginRegistry(cfg.Host).Check(cfg.Plugins); err != nil {
		log.Error(err.Error())
		return 1
	}

	// Agents find it through browser.ServerURLFile; it answers on loopback
	// only, whether or not the browser is enabled, as upstream's does. It
	// starts while the shell does (writing its file alone takes about a
	// millisecond), and is up before the server reports ready.
	urlFile := browser.ServerURLFile
	if v, ok := os.LookupEnv("FILE_VIEWER_URL_FILE"); ok {
		urlFile = v // several servers on one machine need their own
	}
	viewerStarted := make(chan *browser.FileViewer, 1)
	go func() {
		viewer, err := browser.StartFileViewer(cfg.Port, urlFile, log)
		if err != nil {
			log.Warn("file viewer not started", "error", err)
		}
		viewerStarted <- viewer
	}()
	defer func() {
		if viewer := <-viewerStarted; viewer != nil {
			viewer.Close()
		}
	}()

	// Listen before setting up, so the host's readiness probe gets a 503
	// rather than a refused connection while the shell starts.
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Error("listen", "addr", addr, "error", err)
		return 1
	}
	apiKey := os.Getenv("SESSION_API_KEY")
	if exposedWithoutKey(cfg.Host, apiKey) {
		log.Warn("listening on a non-loopback address without SESSION_API_KEY: anyone who can reach it can run commands", "addr", addr)
	}
	srv := server.New(server.Options{APIKey: apiKey, Logger: log})
	httpSrv := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 30 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(ln) }()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	showPlugins := func(set *plugins.Set) {
		srv.ShowStarting(func() []api.PluginStatus { return executor.PluginStatuses(set) })
	}
	exec, err := setup(ctx, cfg, start, log, localURL(ln.Addr()), apiKey, showPlugins)
	if err != nil {
		log.Error("start-up failed", "error", err)
		return 1
	}
	viewer := <-viewerStarted
	viewerStarted <- viewer // for the deferred Close
	srv.SetReady(exec)
	log.Info("ready", "addr", ln.Addr().String(), "version", version, "startup", time.Since(start))

	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-serveErr:
		log.Error("serve", "error", err)
	}
	return shutdown(httpSrv, exec, log)
}

// setup prepares the user and workspace and starts the executor;
// showPlugins receives the plugins before they start.
func setup(ctx context.Context, cfg serverflags.Config, started time.Time, log *slog.Logger, serverURL, apiKey string, showPlugins func(*plugins.Set)) (*executor.Executor, error) {
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
	budget := cfg.OutputBudget
	if budget == 0 {
		budget = serverflags.DefaultOutputBudget
	}
	shellOpts := shell.Options{Logger: log, OutputLimit: cfg.OutputBuffer, Budget: shell.NewOutputBudget(int64(budget))}
	if v := os.Getenv("NO_CHANGE_TIMEOUT_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("NO_CHANGE_TIMEOUT_SECONDS=%q is not a positive integer", v)
		}
		shellOpts.NoChangeTimeout = time.Duration(n) * time.Second
	}
	var mcpTimeout time.Duration
	if v := os.Getenv("MCP_CALL_TIMEOUT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("MCP_CALL_TIMEOUT=%q is not a positive integer", v)
		}
		mcpTimeout = time.Duration(n) * time.Second
	}
	env := shellEnv(u)
	set, err := startPlugins(ctx, pluginRegistry(cfg.Host), cfg.Plugins, plugins.Env{
		Username: u.Name, UID: u.UID, GID: u.GID, Home: u.Home, Credential: u.Credential,
		WorkDir: workDir, Environ: env, ServerURL: serverURL, ServerToken: apiKey, Logger: log,
	}, log, showPlugins)
	if err != nil {
		return nil, err
	}
	var owner *chown.Owner
	if os.Getuid() == 0 {
		// Upstream gives new files <uid>:<uid>, whatever the user's
		// primary group; only root can give files away at all.
		owner = &chown.Owner{UID: u.UID, GID: u.UID}
	}
	exec, err := executor.New(ctx, executor.Options{
		Started:       started,
		WorkDir:       workDir,
		Username:      u.Name,
		Credential:    u.Credential,
		FileOwner:     owner,
		Env:           env,
		Shell:         shellOpts,
		EnableBrowser: cfg.EnableBrowser,
		Browser:       browser.Options{Eager: cfg.BrowserEager},
		Plugins:       set,
		MCPTimeout:    mcpTimeout,
		Logger:        log,
	})
	if err != nil {
		set.Stop(context.WithoutCancel(ctx))
	}
	return exec, err
}

// shutdown stops accepting requests, ends running commands (which lets
// their requests finish) and returns within about five seconds.
func shutdown(httpSrv *http.Server, exec *executor.Executor, log *slog.Logger) int {
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
	return 0
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
