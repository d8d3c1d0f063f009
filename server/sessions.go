package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/executor"
	"github.com/actionserver/actionserver/shell"
)

// The native sessions API: several shells, commands started without
// waiting, output read by offset, control of running commands.

// SessionInfo describes a session.
type SessionInfo struct {
	ID             string        `json:"id"`
	Cwd            string        `json:"cwd"`
	Started        time.Time     `json:"started"`
	PID            int           `json:"pid"`
	RunningCommand *CommandBrief `json:"running_command"`
}

// CommandBrief names a command.
type CommandBrief struct {
	ID      int64     `json:"id"`
	Command string    `json:"command"`
	Started time.Time `json:"started"`
}

// CommandInfo is the state of a command.
type CommandInfo struct {
	ID       int64        `json:"id"`
	Session  string       `json:"session"`
	Command  string       `json:"command"`
	Running  bool         `json:"running"`
	ExitCode *int         `json:"exit_code"`
	Died     bool         `json:"shell_died"`
	Started  time.Time    `json:"started"`
	Finished *time.Time   `json:"finished"`
	Metadata *CommandMeta `json:"metadata"`
	Output   OutputRange  `json:"output"`
}

// CommandMeta is what the prompt reported after the command.
type CommandMeta struct {
	ExitCode          int    `json:"exit_code"`
	PID               int    `json:"pid"`
	Username          string `json:"username"`
	Hostname          string `json:"hostname"`
	WorkingDir        string `json:"working_dir"`
	PyInterpreterPath string `json:"py_interpreter_path"`
}

// OutputRange is the span of output still kept, in byte offsets.
type OutputRange struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// OutputChunk answers an output read.
type OutputChunk struct {
	Offset     int64  `json:"offset"`
	NextOffset int64  `json:"next_offset"`
	Lost       int64  `json:"lost"`
	Data       string `json:"data"`
	Tail       string `json:"tail"`
	Done       bool   `json:"done"`
	ExitCode   *int   `json:"exit_code"`
}

func sessionInfo(ns executor.NamedSession) SessionInfo {
	info := SessionInfo{ID: ns.ID, Cwd: ns.Session.Cwd(), Started: ns.Session.Started(), PID: ns.Session.PID()}
	if c, ok := ns.Session.Running(); ok {
		info.RunningCommand = &CommandBrief{ID: c.ID, Command: c.Text, Started: c.Started}
	}
	return info
}

func commandInfo(session string, c *shell.Command) CommandInfo {
	st := c.Status()
	info := CommandInfo{ID: st.ID, Session: session, Command: st.Text, Running: st.Running, Died: st.Died,
		Started: st.Started, Output: OutputRange{st.OutputStart, st.OutputEnd}}
	if !st.Running {
		code := st.Metadata.ExitCode
		fin := st.Finished
		info.ExitCode, info.Finished = &code, &fin
		m := st.Metadata
		info.Metadata = &CommandMeta{ExitCode: m.ExitCode, PID: m.PID, Username: m.Username, Hostname: m.Hostname,
			WorkingDir: m.WorkingDir, PyInterpreterPath: m.PyInterpreterPath}
	}
	return info
}

func (s *Server) listSessions(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	out := []SessionInfo{}
	for _, ns := range e.Sessions() {
		out = append(out, sessionInfo(ns))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) createSession(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	var req struct {
		ID  string            `json:"id"`
		Cwd string            `json:"cwd"`
		Env map[string]string `json:"env"`
	}
	if !s.bindJSON(c, &req, true) {
		return
	}
	ns, err := e.CreateSession(c.Request.Context(), executor.SessionOptions{ID: req.ID, Cwd: req.Cwd, Env: req.Env})
	switch {
	case errors.Is(err, executor.ErrSessionExists):
		detail(c, http.StatusConflict, err.Error())
	case errors.Is(err, executor.ErrBadSessionID):
		detail(c, http.StatusBadRequest, err.Error())
	case errors.Is(err, executor.ErrTooManySessions):
		detail(c, http.StatusTooManyRequests, err.Error())
	case errors.Is(err, shell.ErrNoPTY):
		// Not the server's fault, and it passes when a session ends.
		detail(c, http.StatusServiceUnavailable, "could not start the session: "+err.Error())
	case err != nil:
		detail(c, http.StatusInternalServerError, "could not start the session: "+err.Error())
	default:
		c.JSON(http.StatusCreated, sessionInfo(ns))
	}
}

func (s *Server) getSession(c *gin.Context) {
	if ns, ok := s.session(c); ok {
		c.JSON(http.StatusOK, sessionInfo(ns))
	}
}

func (s *Server) deleteSession(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	id := c.Param("id")
	switch err := e.DeleteSession(id); {
	case errors.Is(err, executor.ErrSessionNotFound):
		detail(c, http.StatusNotFound, "session "+id+" not found")
	case errors.Is(err, executor.ErrDefaultSession):
		detail(c, http.StatusBadRequest, err.Error())
	case err != nil:
		detail(c, http.StatusInternalServerError, err.Error())
	default:
		c.JSON(http.StatusOK, gin.H{"id": id, "deleted": true})
	}
}

func (s *Server) startCommand(c *gin.Context) {
	ns, ok := s.session(c)
	if !ok {
		return
	}
	var req struct {
		Command string `json:"command"`
	}
	if !s.bindJSON(c, &req, false) {
		return
	}
	if strings.TrimSpace(req.Command) == "" {
		detail(c, http.StatusBadRequest, "command must not be empty")
		return
	}
	cmd, err := ns.Session.Start(c.Request.Context(), req.Command)
	switch {
	case errors.Is(err, shell.ErrBusy):
		detail(c, http.StatusConflict, err.Error())
	case err != nil:
		detail(c, http.StatusInternalServerError, err.Error())
	default:
		c.JSON(http.StatusAccepted, commandInfo(ns.ID, cmd))
	}
}

func (s *Server) getCommand(c *gin.Context) {
	if ns, cmd, ok := s.command(c); ok {
		c.JSON(http.StatusOK, commandInfo(ns.ID, cmd))
	}
}

// maxOutputChunk bounds one output answer.
const maxOutputChunk = 1 << 20

// readOutput answers GET .../output?offset=N&wait=MS: the output from N, or
// after waiting up to MS milliseconds for some.
func (s *Server) readOutput(c *gin.Context) {
	_, cmd, ok := s.command(c)
	if !ok {
		return
	}
	off, err1 := queryInt(c, "offset", 0)
	wait, err2 := queryInt(c, "wait", 0)
	max, err3 := queryInt(c, "max", maxOutputChunk)
	if err := errors.Join(err1, err2, err3); err != nil {
		detail(c, http.StatusBadRequest, err.Error())
		return
	}
	max = min(max, maxOutputChunk)
	deadline := time.NewTimer(time.Duration(min(wait, 60_000)) * time.Millisecond)
	defer deadline.Stop()
	for {
		changed := cmd.Changed()
		ch := cmd.Read(off, int(max))
		if len(ch.Data) > 0 || ch.Lost > 0 || ch.Done || wait <= 0 {
			c.JSON(http.StatusOK, outputChunk(cmd, ch))
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			c.JSON(http.StatusOK, outputChunk(cmd, ch))
			return
		case <-c.Request.Context().Done():
			return
		}
	}
}

func outputChunk(cmd *shell.Command, ch shell.Chunk) OutputChunk {
	out := OutputChunk{Offset: ch.Offset, NextOffset: ch.Next, Lost: ch.Lost, Data: string(ch.Data), Tail: ch.Tail, Done: ch.Done}
	if ch.Done {
		code := cmd.Status().Metadata.ExitCode
		out.ExitCode = &code
	}
	return out
}

func (s *Server) sendInput(c *gin.Context) {
	ns, ok := s.session(c)
	if !ok {
		return
	}
	var req struct {
		Text  *string `json:"text"`
		Key   string  `json:"key"`
		Enter *bool   `json:"enter"`
	}
	if !s.bindJSON(c, &req, false) {
		return
	}
	var err error
	switch {
	case req.Key != "" && req.Text == nil:
		err = ns.Session.Key(req.Key)
	case req.Text != nil && req.Key == "":
		err = ns.Session.Input(*req.Text, req.Enter == nil || *req.Enter)
	default:
		detail(c, http.StatusBadRequest, `send either "text" (with optional "enter") or "key"`)
		return
	}
	s.controlResult(c, err)
}

var signals = map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL}

func (s *Server) sendSignal(c *gin.Context) {
	ns, ok := s.session(c)
	if !ok {
		return
	}
	var req struct {
		Signal string `json:"signal"`
	}
	if !s.bindJSON(c, &req, false) {
		return
	}
	name := strings.ToUpper(req.Signal)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	sig, known := signals[name]
	if !known {
		detail(c, http.StatusBadRequest, "signal must be SIGINT, SIGTERM or SIGKILL")
		return
	}
	s.controlResult(c, ns.Session.Signal(sig))
}

func (s *Server) resize(c *gin.Context) {
	ns, ok := s.session(c)
	if !ok {
		return
	}
	var req struct {
		Rows uint16 `json:"rows"`
		Cols uint16 `json:"cols"`
	}
	if !s.bindJSON(c, &req, false) {
		return
	}
	if req.Rows == 0 || req.Cols == 0 {
		detail(c, http.StatusBadRequest, "rows and cols must be positive")
		return
	}
	s.controlResult(c, ns.Session.Resize(req.Rows, req.Cols))
}

func (s *Server) controlResult(c *gin.Context, err error) {
	switch {
	case errors.Is(err, shell.ErrNotRunning):
		detail(c, http.StatusConflict, err.Error())
	case errors.Is(err, shell.ErrUnknownKey):
		detail(c, http.StatusBadRequest, err.Error())
	case err != nil:
		detail(c, http.StatusConflict, err.Error())
	default:
		c.JSON(http.StatusOK, gin.H{"ok": true})
	}
}

// session finds the :id session or answers 404.
func (s *Server) session(c *gin.Context) (executor.NamedSession, bool) {
	e := s.executor(c)
	if e == nil {
		return executor.NamedSession{}, false
	}
	id := c.Param("id")
	sess, ok := e.Session(id)
	if !ok {
		detail(c, http.StatusNotFound, "session "+id+" not found")
		return executor.NamedSession{}, false
	}
	return executor.NamedSession{ID: id, Session: sess}, true
}

// command finds the :cid command of the :id session or answers 404.
func (s *Server) command(c *gin.Context) (executor.NamedSession, *shell.Command, bool) {
	ns, ok := s.session(c)
	if !ok {
		return ns, nil, false
	}
	cid, err := strconv.ParseInt(c.Param("cid"), 10, 64)
	if err != nil {
		detail(c, http.StatusBadRequest, "command id must be an integer")
		return ns, nil, false
	}
	cmd, ok := ns.Session.Command(cid)
	if !ok {
		detail(c, http.StatusNotFound, "command "+c.Param("cid")+" not found in session "+ns.ID)
		return ns, nil, false
	}
	return ns, cmd, true
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
