package server

import (
	"crypto/subtle"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
)

// Late binding: a warm pool boots sandboxes before it knows whose they
// are. Started with an init token (Options.InitToken), the server has no
// session key and answers only its probes and /server_info; POST /claim,
// with the init token, delivers the key, the environment and the working
// directory. Claiming again rotates the key: the old one is refused from
// the moment the claim answers, and what runs goes on.

// claimPath is the late-binding route.
const claimPath = "/claim"

// keyHolder holds the session API key. The auth check reads it on every
// request and a claim swaps it, so both go through one atomic pointer; nil
// means no key was delivered yet.
type keyHolder struct{ p atomic.Pointer[string] }

// load returns the key and whether there is one ("" means none is needed).
func (k *keyHolder) load() (key string, set bool) {
	p := k.p.Load()
	if p == nil {
		return "", false
	}
	return *p, true
}

// swap sets the key and reports whether it replaced one.
func (k *keyHolder) swap(key string) (replaced bool) { return k.p.Swap(&key) != nil }

// Details of refused claims and of requests before the claim.
const (
	notClaimed       = "Server is not claimed yet: POST /claim with the init token delivers its key"
	lateBindingOff   = "Late binding is not enabled: the server was started with its key"
	invalidInitToken = "Invalid init token"
	claimNeedsKey    = "api_key must not be empty"
	initTokenScheme  = "Bearer "
	initTokenHeader  = "Authorization"
)

// claim delivers the session key, environment and working directory.
func (s *Server) claim(c *gin.Context) {
	if s.opts.InitToken == "" {
		detail(c, http.StatusNotFound, api.CodeNotFound, lateBindingOff)
		return
	}
	got, ok := strings.CutPrefix(c.GetHeader(initTokenHeader), initTokenScheme)
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.InitToken)) != 1 {
		detail(c, http.StatusForbidden, api.CodeUnauthorized, invalidInitToken)
		return
	}
	var req api.ClaimRequest
	if !s.bindJSON(c, &req, false) {
		return
	}
	if req.APIKey == "" {
		detail(c, http.StatusBadRequest, api.CodeInvalid, claimNeedsKey)
		return
	}
	e := s.executor(c)
	if e == nil {
		return
	}
	// One claim at a time, so the key and the environment that win are
	// those of the same claim.
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if err := e.Claim(c.Request.Context(), req.Env, req.WorkingDir); err != nil {
		fail(c, err)
		return
	}
	rotated := s.keys.swap(req.APIKey)
	if rotated {
		s.log.Info("session key rotated", "env", len(req.Env), "working_dir", req.WorkingDir)
	} else {
		s.log.Info("claimed", "env", len(req.Env), "working_dir", req.WorkingDir)
	}
	c.JSON(http.StatusOK, api.ClaimResponse{Rotated: rotated})
}

// openByOption reports whether the options open path without the key: the
// claim, which checks its own token, and /metrics when asked.
func (s *Server) openByOption(path string) bool {
	return (path == claimPath && s.opts.InitToken != "") || (path == metricsPath && s.opts.OpenMetrics)
}

// claimed reports whether a request for path may go on as far as late
// binding is concerned: the server has a key, or path is open before the
// claim (the probes, /server_info, the claim itself, /metrics if open).
func (s *Server) claimed(path string) bool {
	if _, set := s.keys.load(); set {
		return true
	}
	return openPaths[path] || s.openByOption(path)
}
