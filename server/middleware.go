package server

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
)

// openPaths answer without the key: the host's readiness probe, the
// resource report and the orchestrator's probes.
var openPaths = map[string]bool{"/alive": true, "/server_info": true, livezPath: true, readyzPath: true}

// unexpectedError is the detail of upstream's catch-all 500.
const unexpectedError = "An unexpected error occurred. Please try again later."

// recover turns a panic in a handler into the generic 500 envelope, so one
// bad request cannot take the daemon down.
func (s *Server) recover(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r) // a deliberate cut of a started response
			}
			s.log.Error("handler panic", "path", c.Request.URL.Path, "panic", r)
			detail(c, http.StatusInternalServerError, api.CodeInternal, unexpectedError)
		}
	}()
	c.Next()
}

// logRequests logs each request at debug level (LOG_LEVEL=debug shows
// them), and at info level those the server failed (5xx, but for /alive). A host sends an
// action every few seconds for hours; a line for each cost a write and 130
// bytes of log per action, and told nobody anything the host does not log
// itself. Headers are never logged: they carry the API key.
func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	level := slog.LevelDebug
	// Readiness probes answer 503 until the server is ready, every few
	// seconds from every host: that is no failure.
	if c.Writer.Status() >= http.StatusInternalServerError && c.Request.URL.Path != "/alive" && c.Request.URL.Path != readyzPath {
		level = slog.LevelInfo
	}
	if !s.log.Enabled(c.Request.Context(), level) {
		return
	}
	attrs := []any{"method", c.Request.Method, "path", c.Request.URL.Path,
		"status", c.Writer.Status(), "duration", time.Since(start)}
	if t, ok := c.Get(actionTypeKey); ok {
		attrs = append(attrs, "action", t)
	}
	s.log.Log(c.Request.Context(), level, "request", attrs...)
}
