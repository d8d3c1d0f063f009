package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/actionserver/actionserver/executor"
	"github.com/actionserver/actionserver/internal/serverflags"
	"github.com/actionserver/actionserver/swerex"
)

// runSwerexRemote serves SWE-ReX's API: the binary was started as
// swerex-remote, as SWE-agent starts its server in a sandbox. Sessions run
// as the server's user in its working directory with its environment, as
// upstream's do; none of the native server's set-up (users, plugins,
// browser) applies.
func runSwerexRemote(args []string) int {
	start := time.Now()
	if os.Getenv("PATH") == "" {
		os.Setenv("PATH", defaultPath)
	}
	cfg, err := serverflags.ParseSwerex(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: error: %v\n\n%s", serverflags.SwerexName, err, serverflags.SwerexUsage)
		return 2
	}
	if cfg.ShowHelp {
		fmt.Print(serverflags.SwerexUsage)
		return 0
	}
	if cfg.ShowVersion {
		fmt.Println(version)
		return 0
	}
	if os.Getpid() == 1 && os.Getenv(initChildEnv) == "" {
		// PID 1 of a container: stay a reaper, serve from a child that
		// keeps this name.
		return runAsInitNamed(os.Args[0], args)
	}
	log := newLogger()
	wd, err := os.Getwd()
	if err != nil {
		log.Error("start-up failed", "error", fmt.Errorf("working directory: %w", err))
		return 1
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go stopOnSignal(stop)

	exec := executor.Start(ctx, executor.Options{WorkDir: wd, Env: os.Environ(), Logger: log, Started: start})
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Error("listen", "addr", addr, "error", err)
		exec.Close(context.Background())
		return 1
	}
	srv := swerex.New(exec, swerex.Options{Token: cfg.AuthToken, Logger: log})
	httpSrv := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 30 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- httpSrv.Serve(ln) }()
	log.Info("ready", "api", "swe-rex", "addr", ln.Addr().String(), "version", version, "startup", time.Since(start))

	code := 0
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-serveErr:
		if !errors.Is(err, http.ErrServerClosed) {
			log.Error("serve", "error", err)
			code = 1
		}
	}
	down, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	_ = httpSrv.Shutdown(down)
	srv.Close(down)
	exec.Close(down)
	return code
}
