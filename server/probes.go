package server

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
)

// The orchestrator's probes, beside OpenHands' /alive (which holds a probe
// for a moment while the server is about to be ready, and is 503 until
// then):
//
//   - /livez answers 200 at once, always: the process serves HTTP. A
//     liveness probe must never wait or fail for a slow start or a drain,
//     or the orchestrator kills a healthy sandbox.
//   - /readyz answers 200 when the server takes work, 503 while it starts
//     and from the moment it starts draining (SIGTERM), so the
//     orchestrator stops sending work before the listener closes. A server
//     waiting to be claimed (late binding) is ready: the claim is the work
//     it waits for.

// Probe paths, open without the key.
const (
	livezPath  = "/livez"
	readyzPath = "/readyz"
)

func (s *Server) livez(c *gin.Context) { c.JSON(http.StatusOK, api.Status{Status: "ok"}) }

func (s *Server) readyz(c *gin.Context) {
	switch {
	case s.draining.Load():
		c.JSON(http.StatusServiceUnavailable, api.Status{Status: "draining"})
	case s.exec.Load() == nil:
		c.JSON(http.StatusServiceUnavailable, api.Status{Status: "starting"})
	default:
		c.JSON(http.StatusOK, api.Status{Status: "ok"})
	}
}

// Drain makes the server unready: /readyz answers 503 from now on, and new
// requests other than the probes, /server_info and /metrics are refused
// with 503, while those already accepted go on. The caller then waits for
// them (WaitIdle) and shuts the HTTP server down.
func (s *Server) Drain() { s.draining.Store(true) }

// shuttingDown is the detail of a request refused while draining.
const shuttingDown = "Server is shutting down"

// drainGate counts the requests in flight that do work (WaitIdle waits for
// them) and refuses new ones once the server drains. It runs after the key
// check, so a caller without the key learns nothing.
func (s *Server) drainGate(c *gin.Context) {
	if observerPaths[c.Request.URL.Path] {
		c.Next()
		return
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	if s.draining.Load() {
		detail(c, http.StatusServiceUnavailable, api.CodeUnavailable, shuttingDown)
		return
	}
	c.Next()
}

// observerPaths only report on the server: they neither do work nor are
// refused while it drains.
var observerPaths = map[string]bool{"/alive": true, "/server_info": true, livezPath: true, readyzPath: true, metricsPath: true}

// WaitIdle returns once no request that does work is in flight and at
// least hold has passed, or when ctx ends. Requests that stream (a
// followed output, an attached terminal) count too: ctx bounds the wait.
func (s *Server) WaitIdle(ctx context.Context, hold time.Duration) error {
	until := time.Now().Add(hold)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for s.inflight.Load() > 0 || time.Now().Before(until) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}
