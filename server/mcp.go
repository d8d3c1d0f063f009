package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"

	"github.com/actionserver/actionserver/executor"
)

// mcpPaths are the MCP proxy's routes. They take the session API key in
// any of the headers the host's MCP client sends, so the global
// X-Session-API-Key check leaves them to mcpAuth.
var mcpPaths = map[string]bool{"/mcp/sse": true, "/mcp/messages": true, "/mcp/messages/": true}

// mcpUpdateTimeout bounds an update below the host's 60 s request timeout;
// servers still starting then are named in the log and keep starting.
const mcpUpdateTimeout = 50 * time.Second

func (s *Server) mcpRoutes(r *gin.Engine) {
	r.POST("/update_mcp_server", s.updateMCPServer)
	r.GET("/mcp/sse", s.mcpAuth, s.mcpProxy)
	r.POST("/mcp/messages", s.mcpAuth, s.mcpProxy)
	r.POST("/mcp/messages/", s.mcpAuth, s.mcpProxy)
}

// updateMCPServer replaces the stdio MCP servers behind /mcp/sse.
func (s *Server) updateMCPServer(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxBodyBytes))
	if err != nil {
		detail(c, http.StatusBadRequest, api.CodeInvalid, "Request must be a list of MCP tools to sync")
		return
	}
	servers, err := executor.ParseMCPServers(body)
	if errors.Is(err, executor.ErrMCPNotList) {
		detail(c, http.StatusBadRequest, api.CodeInvalid, "Request must be a list of MCP tools to sync")
		return
	}
	if err != nil {
		// Upstream's model validation raises inside the handler, which its
		// catch-all turns into the generic 500; the host only logs a
		// failed update, whatever its status, so the client's mistake is
		// said as one, and which entry it is.
		detail(c, http.StatusBadRequest, api.CodeInvalid, describeJSON(err))
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), mcpUpdateTimeout)
	defer cancel()
	log, err := e.UpdateMCPServers(ctx, servers)
	if err != nil {
		log = strings.TrimSpace(log + "\n" + err.Error())
	}
	if log != "" {
		s.log.Warn("MCP servers failed to start", "log", log)
	}
	c.JSON(http.StatusOK, gin.H{"detail": "MCP server updated successfully", "router_error_log": log})
}

// MCPProxy is the MCP proxy the /mcp routes serve (the executor's, which
// cmd/action-server hands over: the server imports no component).
type MCPProxy interface {
	// Configured reports whether an update has named a server.
	Configured() bool
	// Handler serves GET .../sse and POST .../messages/.
	Handler() http.Handler
}

// mcpProxy hands the request to the proxy, which is served once an update
// has named a server (404 before, as upstream mounts it only then).
func (s *Server) mcpProxy(c *gin.Context) {
	if s.executor(c) == nil {
		return
	}
	p := s.opts.MCP
	if p == nil || !p.Configured() {
		detail(c, http.StatusNotFound, api.CodeNotFound, "Not Found")
		return
	}
	p.Handler().ServeHTTP(c.Writer, c.Request)
}

// mcpAuth accepts the session API key as "Authorization: Bearer KEY", as
// "s: KEY" or as "X-Session-API-Key: KEY": the host's MCP client sends all
// three. A request with none is refused as the other routes refuse it.
func (s *Server) mcpAuth(c *gin.Context) {
	if !s.mcpKeyValid(c) {
		detail(c, http.StatusForbidden, api.CodeUnauthorized, "Invalid API Key")
		return
	}
	c.Next()
}

// mcpKeyValid reports whether no key is set or the request carries it in
// one of the headers mcpAuth takes.
func (s *Server) mcpKeyValid(c *gin.Context) bool {
	key, _ := s.keys.load()
	if key == "" {
		return true
	}
	want := []byte(key)
	for _, got := range []string{
		bearer(c.GetHeader("Authorization")),
		c.GetHeader("s"),
		c.GetHeader(api.HeaderAPIKey),
	} {
		if got != "" && subtle.ConstantTimeCompare([]byte(got), want) == 1 {
			return true
		}
	}
	return false
}

func bearer(h string) string {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
