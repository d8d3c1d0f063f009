package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/executor"
)

// The native sessions API: several shells, commands started without
// waiting, output read by offset, control of running commands. The wire
// types are package api's (mapped in wire.go); the work is the executor's
// Session.

func (s *Server) listSessions(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	out := []api.Session{}
	for _, sess := range e.Sessions(c.Request.Context()) {
		out = append(out, sessionInfo(sess.Info()))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) createSession(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	var req api.CreateSessionRequest
	if !s.bindJSON(c, &req, true) {
		return
	}
	sess, err := e.CreateSession(c.Request.Context(), executor.SessionOptions{ID: req.ID, Cwd: req.Cwd, Env: req.Env})
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, sessionInfo(sess.Info()))
}

func (s *Server) getSession(c *gin.Context) {
	if sess, ok := s.session(c); ok {
		c.JSON(http.StatusOK, sessionInfo(sess.Info()))
	}
}

func (s *Server) deleteSession(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	id := c.Param("id")
	if err := e.DeleteSession(c.Request.Context(), id); err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, api.SessionDeleted{ID: id, Deleted: true})
}

func (s *Server) startCommand(c *gin.Context) {
	sess, ok := s.session(c)
	if !ok {
		return
	}
	var req api.StartCommandRequest
	if !s.bindJSON(c, &req, false) {
		return
	}
	var cmd *executor.Command
	var err error
	switch {
	case req.Pipe:
		cmd, err = sess.StartPipe(c.Request.Context(), req.Command, req.Cwd, req.Env)
	case req.Cwd != "" || len(req.Env) > 0:
		err = executor.ErrPipeOnly
	default:
		cmd, err = sess.Start(c.Request.Context(), req.Command)
	}
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, commandInfo(cmd.Info()))
}

func (s *Server) getCommand(c *gin.Context) {
	if cmd, ok := s.command(c); ok {
		c.JSON(http.StatusOK, commandInfo(cmd.Info()))
	}
}

// readOutput answers GET .../output?offset=N&wait=MS&max=B: the output from
// N, or after waiting up to MS milliseconds for some.
func (s *Server) readOutput(c *gin.Context) {
	cmd, ok := s.command(c)
	if !ok {
		return
	}
	off, err1 := queryInt(c, "offset", 0)
	wait, err2 := queryInt(c, "wait", 0)
	max, err3 := queryInt(c, "max", executor.MaxOutputChunk)
	if err := errors.Join(err1, err2, err3); err != nil {
		detail(c, http.StatusBadRequest, api.CodeInvalid, err.Error())
		return
	}
	// Capped before it becomes a Duration, which a huge number overflows.
	waitFor := time.Duration(min(wait, executor.MaxOutputWait.Milliseconds())) * time.Millisecond
	max = min(max, executor.MaxOutputChunk)
	ch, err := cmd.Poll(c.Request.Context(), off, int(max), waitFor)
	if err != nil {
		return // the client is gone
	}
	if c.Query(api.QueryFormat) == api.FormatRaw {
		writeRawChunk(c, outputChunk(ch))
		return
	}
	c.JSON(http.StatusOK, outputChunk(ch))
}

func (s *Server) sendInput(c *gin.Context) {
	sess, ok := s.session(c)
	if !ok {
		return
	}
	var req api.InputRequest
	if !s.bindJSON(c, &req, false) {
		return
	}
	var err error
	switch {
	case req.Key != "" && req.Text == nil:
		err = sess.Key(req.Key)
	case req.Text != nil && req.Key == "":
		err = sess.Input(*req.Text, req.Enter == nil || *req.Enter)
	default:
		detail(c, http.StatusBadRequest, api.CodeInvalid, `send either "text" (with optional "enter") or "key"`)
		return
	}
	controlResult(c, err)
}

func (s *Server) sendSignal(c *gin.Context) {
	sess, ok := s.session(c)
	if !ok {
		return
	}
	var req api.SignalRequest
	if !s.bindJSON(c, &req, false) {
		return
	}
	if req.Command != nil {
		controlResult(c, sess.SignalPipe(*req.Command, req.Signal))
		return
	}
	controlResult(c, sess.Signal(req.Signal))
}

func (s *Server) resize(c *gin.Context) {
	sess, ok := s.session(c)
	if !ok {
		return
	}
	var req api.ResizeRequest
	if !s.bindJSON(c, &req, false) {
		return
	}
	controlResult(c, sess.Resize(req.Rows, req.Cols))
}

func controlResult(c *gin.Context, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, api.OK{OK: true})
}

// session finds the :id session or answers why there is none: 404 for an
// unknown id, the start's error for a default shell that failed to start.
func (s *Server) session(c *gin.Context) (*executor.Session, bool) {
	e := s.executor(c)
	if e == nil {
		return nil, false
	}
	sess, err := e.Session(c.Request.Context(), c.Param("id"))
	if err != nil {
		fail(c, err)
		return nil, false
	}
	return sess, true
}

// command finds the :cid command of the :id session or answers 404.
func (s *Server) command(c *gin.Context) (*executor.Command, bool) {
	sess, ok := s.session(c)
	if !ok {
		return nil, false
	}
	cid, err := strconv.ParseInt(c.Param("cid"), 10, 64)
	if err != nil {
		detail(c, http.StatusBadRequest, api.CodeInvalid, "command id must be an integer")
		return nil, false
	}
	cmd, ok := sess.Command(cid)
	if !ok {
		detail(c, http.StatusNotFound, api.CodeNotFound, "command "+c.Param("cid")+" not found in session "+sess.ID())
		return nil, false
	}
	return cmd, true
}

// bindJSON decodes a bounded JSON body; an empty body is allowed when
// optional.
func (s *Server) bindJSON(c *gin.Context, v any, optional bool) bool {
	body, ok := s.readBody(c)
	if !ok {
		return false
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		if optional {
			return true
		}
		invalidRequest(c, errors.New("a JSON body is required"))
		return false
	}
	if err := decodeStrict(body, v); err != nil {
		invalidRequest(c, err)
		return false
	}
	return true
}

func queryInt(c *gin.Context, name string, def int64) (int64, error) {
	v := c.Query(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New(name + " must be a non-negative integer")
	}
	return n, nil
}
