package swerex

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/executor"
)

// Options configure a Server. Zero values are usable defaults.
type Options struct {
	// Token is the API key every request must carry in X-API-Key; empty
	// lets every request in, as upstream does with an empty --auth-token.
	Token string
	// Logger receives diagnostics; default slog.Default().
	Logger *slog.Logger
	// MaxBodyBytes bounds a JSON request body; default 64 MiB.
	MaxBodyBytes int64
	// MaxUploadBytes bounds an upload; default 8 GiB.
	MaxUploadBytes int64
	// MaxOutputBytes bounds what /execute keeps of each output stream and
	// what read_file reads; default 64 MiB.
	MaxOutputBytes int
	// Bash is the bash that checks commands' syntax; default from PATH.
	Bash string
}

// Server serves SWE-ReX's API over an executor's sessions.
type Server struct {
	opts     Options
	log      *slog.Logger
	exec     *executor.Executor
	sessions *sessions
	replay   replay
	engine   *gin.Engine
}

var ginMode sync.Once

// New returns a Server over e. The server never closes e.
func New(e *executor.Executor, opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 64 << 20
	}
	if opts.MaxUploadBytes <= 0 {
		opts.MaxUploadBytes = 8 << 30
	}
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = 64 << 20
	}
	if opts.Bash == "" {
		opts.Bash = "bash"
		if p, err := exec.LookPath("bash"); err == nil {
			opts.Bash = p
		}
	}
	ginMode.Do(func() { gin.SetMode(gin.ReleaseMode) })
	s := &Server{opts: opts, log: opts.Logger, exec: e, sessions: newSessions(e)}
	s.engine = s.routes()
	return s
}

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler { return s.engine }

// Close ends every session.
func (s *Server) Close(ctx context.Context) { s.sessions.closeAll(ctx) }

func (s *Server) routes() *gin.Engine {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.Use(s.recover, s.logRequests, s.auth, s.replayLast)
	r.NoRoute(func(c *gin.Context) { detail(c, http.StatusNotFound, "Not Found") })
	r.NoMethod(func(c *gin.Context) { detail(c, http.StatusMethodNotAllowed, "Method Not Allowed") })

	r.GET("/", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"message": "hello world"}) })
	r.GET("/is_alive", func(c *gin.Context) { c.JSON(http.StatusOK, isAliveResponse{IsAlive: true}) })
	r.POST("/create_session", s.createSession)
	r.POST("/run_in_session", s.runInSession)
	r.POST("/close_session", s.closeSession)
	r.POST("/execute", s.execute)
	r.POST("/read_file", s.readFile)
	r.POST("/write_file", s.writeFile)
	r.POST("/upload", s.upload)
	r.POST("/close", s.close)
	return r
}

// recover turns a panic into a 500, so one bad request cannot take the
// server and every session down with it.
func (s *Server) recover(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic serving a request", "path", c.Request.URL.Path, "panic", v)
			detail(c, http.StatusInternalServerError, "Internal Server Error")
		}
	}()
	c.Next()
}

// logRequests logs one line per request at debug level, and requests
// that failed on the server's side (5xx other than an exception) at info.
func (s *Server) logRequests(c *gin.Context) {
	start := time.Now()
	c.Next()
	status := c.Writer.Status()
	level := slog.LevelDebug
	if status >= 500 && status != statusException {
		level = slog.LevelInfo
	}
	s.log.Log(c.Request.Context(), level, "request", "api", "swe-rex", "method", c.Request.Method,
		"path", c.Request.URL.Path, "status", status, "duration", time.Since(start))
}

// auth refuses a request without the right X-API-Key as upstream does:
// 401 "Not authenticated" when there is none, 401 "Invalid API Key" when
// it differs.
func (s *Server) auth(c *gin.Context) {
	if s.opts.Token == "" {
		return
	}
	key := c.GetHeader("X-API-Key")
	if key == "" {
		c.Header("WWW-Authenticate", "APIKey")
		detail(c, http.StatusUnauthorized, "Not authenticated")
		return
	}
	if subtle.ConstantTimeCompare([]byte(key), []byte(s.opts.Token)) != 1 {
		detail(c, http.StatusUnauthorized, "Invalid API Key")
	}
}

// decode reads a JSON body into v (an object), answering the client
// itself, as FastAPI's validation does, when it cannot.
func (s *Server) decode(c *gin.Context, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			detail(c, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body exceeds %d bytes", tooBig.Limit))
			return false
		}
		detail(c, http.StatusBadRequest, "Could not read the request body: "+err.Error())
		return false
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		invalid(c, "missing", nil, "Field required")
		return false
	}
	if !json.Valid(trimmed) {
		invalid(c, "json_invalid", []any{0}, "JSON decode error")
		return false
	}
	if trimmed[0] != '{' {
		invalid(c, "model_attributes_type", nil, "Input should be a valid dictionary or object to extract fields from")
		return false
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			kind, msg := typeText(typeErr.Type)
			invalid(c, kind, fieldLoc(typeErr.Field), msg)
			return false
		}
		invalid(c, "value_error", nil, "Invalid request body")
		return false
	}
	return true
}

// answer writes a reply, or the exception err.
func answer[T any](c *gin.Context, v T, err error) {
	if err != nil {
		if c.Request.Context().Err() != nil {
			c.Abort() // the client is gone
			return
		}
		raise(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (s *Server) createSession(c *gin.Context) {
	req := createSessionRequest{Session: "default", SessionType: "bash"}
	if !s.decode(c, &req) {
		return
	}
	if req.SessionType != "bash" {
		invalid(c, "union_tag_invalid", nil, fmt.Sprintf("Input tag %q found using 'session_type' does not match any of the expected tags: 'bash'", req.SessionType))
		return
	}
	resp, err := s.sessions.create(c.Request.Context(), req)
	answer(c, resp, err)
}

func (s *Server) runInSession(c *gin.Context) {
	a := action{Session: "default", Check: "raise", ActionType: "bash"}
	if !s.decode(c, &a) {
		return
	}
	switch a.ActionType {
	case "bash":
		if a.Command == nil {
			invalid(c, "missing", []any{"bash", "command"}, "Field required")
			return
		}
		switch a.Check {
		case "silent", "raise", "ignore":
		default:
			invalid(c, "literal_error", []any{"bash", "check"}, "Input should be 'silent', 'raise' or 'ignore'")
			return
		}
	case "bash_interrupt":
	default:
		invalid(c, "union_tag_invalid", nil, fmt.Sprintf("Input tag %q found using 'action_type' does not match any of the expected tags: 'bash', 'bash_interrupt'", a.ActionType))
		return
	}
	ctx := c.Request.Context()
	sess, err := s.sessions.get(a.Session)
	if err != nil {
		raise(c, err)
		return
	}
	if err := sess.lock(ctx); err != nil {
		c.Abort()
		return
	}
	defer sess.unlock()
	var obs observation
	if a.ActionType == "bash" {
		obs, err = sess.run(ctx, a, s.opts.Bash)
	} else {
		obs, err = sess.interrupt(ctx, a)
	}
	answer(c, obs, err)
}

func (s *Server) closeSession(c *gin.Context) {
	req := closeSessionRequest{Session: "default", SessionType: "bash"}
	if !s.decode(c, &req) {
		return
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), time.Second)
	defer cancel()
	err := s.sessions.close(ctx, req.Session)
	answer(c, sessionTypeOnly{SessionType: "bash"}, err)
}

func (s *Server) execute(c *gin.Context) {
	var req executeRequest
	if !s.decode(c, &req) {
		return
	}
	if req.Command == nil {
		invalid(c, "missing", []any{"command"}, "Field required")
		return
	}
	argv, ok := argvOf(req.Command, req.Shell)
	if !ok {
		invalid(c, "string_type", []any{"command"}, "Input should be a valid string or a non-empty list of strings")
		return
	}
	resp, err := execute(c.Request.Context(), req, argv, s.opts.MaxOutputBytes)
	answer(c, resp, err)
}

func (s *Server) readFile(c *gin.Context) {
	var req readFileRequest
	if !s.decode(c, &req) {
		return
	}
	if req.Path == nil {
		invalid(c, "missing", []any{"path"}, "Field required")
		return
	}
	var enc, errs string
	if req.Encoding != nil {
		enc = *req.Encoding
	}
	if req.Errors != nil {
		errs = *req.Errors
	}
	content, err := readFile(*req.Path, enc, errs, int64(s.opts.MaxOutputBytes))
	answer(c, readFileResponse{Content: content}, err)
}

func (s *Server) writeFile(c *gin.Context) {
	var req writeFileRequest
	if !s.decode(c, &req) {
		return
	}
	switch {
	case req.Path == nil:
		invalid(c, "missing", []any{"path"}, "Field required")
		return
	case req.Content == nil:
		invalid(c, "missing", []any{"content"}, "Field required")
		return
	}
	answer(c, struct{}{}, writeFile(*req.Path, *req.Content))
}

func (s *Server) upload(c *gin.Context) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxUploadBytes)
	// Parts beyond 32 MiB spill to temporary files, not memory.
	if err := c.Request.ParseMultipartForm(32 << 20); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			detail(c, http.StatusRequestEntityTooLarge, fmt.Sprintf("Upload exceeds %d bytes", tooBig.Limit))
			return
		}
		invalid(c, "value_error", nil, "Expected a multipart form with file, target_path and unzip: "+err.Error())
		return
	}
	defer c.Request.MultipartForm.RemoveAll()
	target := c.Request.PostFormValue("target_path")
	if _, ok := c.Request.MultipartForm.Value["target_path"]; !ok {
		invalid(c, "missing", []any{"target_path"}, "Field required")
		return
	}
	unzip, ok := formBool(c.Request.PostFormValue("unzip"))
	if !ok {
		invalid(c, "bool_parsing", []any{"unzip"}, "Input should be a valid boolean, unable to interpret input")
		return
	}
	file, _, err := c.Request.FormFile("file")
	if err != nil {
		invalid(c, "missing", []any{"file"}, "Field required")
		return
	}
	defer file.Close()
	answer(c, struct{}{}, upload(c.Request.Context(), s.exec, file, target, unzip))
}

// formBool parses a form field as pydantic parses a bool; absent is false.
func formBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "", "false", "0", "no", "off", "f", "n":
		return false, true
	case "true", "1", "yes", "on", "t", "y":
		return true, true
	}
	return false, false
}

func (s *Server) close(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	s.sessions.closeAll(ctx)
	c.JSON(http.StatusOK, struct{}{})
}
