// Package server is the HTTP API over an executor: the OpenHands-compatible
// routes (/alive, /server_info, /execute_action, ...), the session API-key
// check and the error envelopes. Handlers only decode, call the executor
// and encode.
package server

import (
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/executor"
)

// Options configure a Server.
type Options struct {
	// APIKey, when set, must be sent as X-Session-API-Key on every route
	// but /alive and /server_info.
	APIKey string
	// AllowedOrigins are origins (scheme://host[:port]) whose requests are
	// accepted besides the server's own; browsers send them as Origin.
	AllowedOrigins []string
	// AllowedHosts are Host names accepted without an API key besides IP
	// addresses, localhost, host.docker.internal and *.svc.cluster.local.
	AllowedHosts []string
	// MaxBodyBytes bounds request bodies that are read into memory
	// (uploads stream and are not bounded by it); default 64 MiB.
	MaxBodyBytes int64
	// Logger receives request logs; default slog.Default().
	Logger *slog.Logger
	// InitToken, when set, enables POST /claim with this token (late
	// binding). Without an APIKey the server then starts unclaimed: it
	// answers only its probes and /server_info until a claim delivers a
	// key. With one, it starts claimed and a claim rotates the key.
	InitToken string
	// OpenMetrics serves /metrics without the key.
	OpenMetrics bool
	// IdleTrim is how long the server must have no request in flight before
	// it returns freed memory to the kernel; default 1 s, negative disables.
	IdleTrim time.Duration
	// MCP is the MCP proxy served at /mcp/sse and /mcp/messages/; nil
	// answers them 404, as an unconfigured proxy does.
	MCP MCPProxy
}

// Server serves the API. It answers from the moment it is created; until
// SetReady gives it an executor, /alive reports 503 and actions are refused,
// so a host that polls /alive never sends an action too early.
type Server struct {
	opts    Options
	log     *slog.Logger
	exec    atomic.Pointer[executor.Executor]
	engine  *gin.Engine
	started time.Time

	// starting reports the plugins' states /server_info shows until exec
	// is set.
	starting atomic.Pointer[func() []executor.PluginStatus]
	// ready is closed when exec is set, once.
	ready     chan struct{}
	readyOnce sync.Once
	// aliveHeld, when set (by tests), is called as /alive starts to wait.
	aliveHeld func()

	cpuMu   sync.Mutex
	cpuLast cpuSample

	trim *idleTrimmer // nil when disabled

	keys     keyHolder  // the session API key; a claim swaps it
	claimMu  sync.Mutex // one claim at a time
	draining atomic.Bool
	inflight atomic.Int64 // requests doing work (see drainGate)
	metrics  *metrics
}

var ginMode sync.Once

// New returns a Server.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 64 << 20
	}
	// gin keeps its mode in a package variable; set it once, before the
	// first engine, rather than per server.
	ginMode.Do(func() { gin.SetMode(gin.ReleaseMode) })
	s := &Server{opts: opts, log: opts.Logger, started: time.Now(), ready: make(chan struct{})}
	s.cpuLast = readCPUSample()
	if opts.IdleTrim == 0 {
		opts.IdleTrim = time.Second
	}
	if opts.IdleTrim > 0 {
		s.trim = newIdleTrimmer(opts.IdleTrim)
	}
	if opts.InitToken == "" || opts.APIKey != "" {
		s.keys.swap(opts.APIKey)
	}
	s.metrics = newMetrics(s)
	s.engine = s.routes()
	return s
}

// SetReady hands the server an executor that takes actions (its default
// shell may still be starting): from now on /alive is 200.
func (s *Server) SetReady(e *executor.Executor) {
	s.exec.Store(e)
	s.readyOnce.Do(func() { close(s.ready) })
}

// ShowStarting makes /server_info report the states of plugins that are
// still starting, as states returns them, so a host waiting for /alive can
// see what it waits for; once SetReady is called the executor's plugins are
// reported instead.
func (s *Server) ShowStarting(states func() []executor.PluginStatus) { s.starting.Store(&states) }

// Handler returns the http.Handler of the API.
func (s *Server) Handler() http.Handler { return s.engine }

func (s *Server) routes() *gin.Engine {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	// gin answers these redirects while routing, before any middleware
	// runs, so they would bypass the API-key check that must come first
	// (and tell an unauthenticated caller which routes exist).
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.Use(s.recover, s.logRequests, s.metrics.observe, s.guard, s.drainGate)
	if s.trim != nil {
		r.Use(s.trim.middleware)
	}
	r.NoRoute(func(c *gin.Context) { detail(c, http.StatusNotFound, api.CodeNotFound, "Not Found") })
	r.NoMethod(func(c *gin.Context) {
		detail(c, http.StatusMethodNotAllowed, api.CodeMethodNotAllowed, "Method Not Allowed")
	})

	r.GET("/alive", s.alive)
	r.GET(livezPath, s.livez)
	r.GET(readyzPath, s.readyz)
	r.GET(metricsPath, s.serveMetrics)
	r.POST(claimPath, s.claim)
	r.GET("/server_info", s.serverInfo)
	r.POST("/execute_action", s.executeAction)
	r.GET("/openapi.json", s.openAPI)
	r.POST("/upload_file", s.uploadFile)
	r.GET("/download_files", s.downloadFiles)
	r.POST("/list_files", s.listFiles)
	r.GET("/watch", s.watch)
	r.GET("/vscode/connection_token", s.vscodeToken)
	s.mcpRoutes(r)
	s.fsRoutes(r)

	r.GET("/sessions", s.listSessions)
	r.POST("/sessions", s.createSession)
	r.GET("/sessions/:id", s.getSession)
	r.DELETE("/sessions/:id", s.deleteSession)
	r.POST("/sessions/:id/commands", s.startCommand)
	r.GET("/sessions/:id/commands/:cid", s.getCommand)
	r.GET("/sessions/:id/commands/:cid/output", s.readOutput)
	r.GET("/sessions/:id/commands/:cid/stream", s.streamOutput)
	r.POST("/sessions/:id/input", s.sendInput)
	r.POST("/sessions/:id/signal", s.sendSignal)
	r.POST("/sessions/:id/resize", s.resize)
	r.GET("/sessions/:id/attach", s.attach)
	return r
}

// executor returns the ready executor, or answers 503 and returns nil.
func (s *Server) executor(c *gin.Context) *executor.Executor {
	e := s.exec.Load()
	if e == nil {
		detail(c, http.StatusServiceUnavailable, api.CodeUnavailable, "Server is not ready")
	}
	return e
}
