package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/actionserver/actionserver/executor"
	"github.com/actionserver/actionserver/server"
)

// What an orchestrator running many sandboxes sets, from the environment
// (see README.md, "Running a fleet").
const (
	// initTokenEnv and initTokenFileEnv start the server for late binding:
	// no session key until POST /claim delivers one, with this token.
	initTokenEnv     = "INIT_TOKEN"
	initTokenFileEnv = "INIT_TOKEN_FILE"
	// initTokenRemoveEnv=1 removes the token file once read.
	initTokenRemoveEnv = "INIT_TOKEN_FILE_REMOVE"
	// metricsOpenEnv=1 serves /metrics without the key.
	metricsOpenEnv = "METRICS_WITHOUT_KEY"
	// drainHoldEnv is how many seconds after SIGTERM the server keeps its
	// listener open, answering 503 on /readyz, even with nothing in flight,
	// so that the orchestrator sees the flip before the port closes.
	drainHoldEnv = "SHUTDOWN_DRAIN_SECONDS"
)

// drainBudget bounds the wait for accepted requests after SIGTERM; with
// the HTTP shutdown after it the whole stays within five seconds.
const drainBudget = 3 * time.Second

// fleetConfig is what the environment says about late binding, metrics and
// draining.
type fleetConfig struct {
	initToken   string
	openMetrics bool
	drainHold   time.Duration
}

// readFleetConfig reads the fleet settings and removes the init token from
// the environment, so the shells and plugins never inherit it. A token from
// a file never enters the environment at all.
func readFleetConfig() (fleetConfig, error) {
	var fc fleetConfig
	fc.initToken = os.Getenv(initTokenEnv)
	os.Unsetenv(initTokenEnv)
	if path := os.Getenv(initTokenFileEnv); path != "" {
		if fc.initToken != "" {
			return fc, fmt.Errorf("%s and %s are both set: give the init token once", initTokenEnv, initTokenFileEnv)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fc, fmt.Errorf("init token: %w", err)
		}
		fc.initToken = strings.TrimSpace(string(b))
		if fc.initToken == "" {
			return fc, fmt.Errorf("init token: %s is empty", path)
		}
		if isTrue(os.Getenv(initTokenRemoveEnv)) {
			if err := os.Remove(path); err != nil {
				return fc, fmt.Errorf("init token: remove the file once read: %w", err)
			}
		}
	}
	os.Unsetenv(initTokenFileEnv)
	os.Unsetenv(initTokenRemoveEnv)
	fc.openMetrics = isTrue(os.Getenv(metricsOpenEnv))
	if v := os.Getenv(drainHoldEnv); v != "" {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || secs < 0 {
			return fc, fmt.Errorf("%s=%q is not a number of seconds", drainHoldEnv, v)
		}
		fc.drainHold = min(time.Duration(secs*float64(time.Second)), drainBudget)
	}
	return fc, nil
}

func isTrue(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// drainAndShutdown is the end after SIGTERM: readiness turns 503 first and
// new work is refused, while the listener stays open; commands start
// ending at once, so the requests waiting on them return; once nothing is
// in flight (and at least hold passed) the listener closes. Commands get
// shutdownGrace and the whole takes about five seconds at most.
func drainAndShutdown(srv *server.Server, httpSrv *http.Server, exec *executor.Executor, hold time.Duration, log *slog.Logger) {
	start := time.Now()
	srv.Drain()
	closeCtx, closeCancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer closeCancel()
	closed := make(chan struct{})
	go func() {
		exec.Close(closeCtx)
		close(closed)
	}()
	waitCtx, waitCancel := context.WithTimeout(context.Background(), drainBudget)
	if err := srv.WaitIdle(waitCtx, hold); err != nil {
		log.Warn("requests still in flight when the drain ended", "after", time.Since(start))
	}
	waitCancel()
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(4*time.Second))
	defer cancel()
	if err := httpSrv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Warn("shutdown", "error", err)
	}
	<-closed
	httpSrv.Close()
}
