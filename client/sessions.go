package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Session describes a shell session.
type Session struct {
	ID             string        `json:"id"`
	Cwd            string        `json:"cwd"`
	Started        time.Time     `json:"started"`
	PID            int           `json:"pid"`
	RunningCommand *CommandBrief `json:"running_command"`
}

// CommandBrief names a running command.
type CommandBrief struct {
	ID      int64     `json:"id"`
	Command string    `json:"command"`
	Started time.Time `json:"started"`
}

// Command is the state of a command run through the sessions API.
type Command struct {
	ID        int64      `json:"id"`
	Session   string     `json:"session"`
	Command   string     `json:"command"`
	Running   bool       `json:"running"`
	ExitCode  *int       `json:"exit_code"`
	ShellDied bool       `json:"shell_died"`
	Started   time.Time  `json:"started"`
	Finished  *time.Time `json:"finished"`
	Metadata  *struct {
		ExitCode          int    `json:"exit_code"`
		PID               int    `json:"pid"`
		Username          string `json:"username"`
		Hostname          string `json:"hostname"`
		WorkingDir        string `json:"working_dir"`
		PyInterpreterPath string `json:"py_interpreter_path"`
	} `json:"metadata"`
	Output struct {
		Start int64 `json:"start"`
		End   int64 `json:"end"`
	} `json:"output"`
}

// OutputChunk is one read of a command's output.
type OutputChunk struct {
	Offset     int64  `json:"offset"`
	NextOffset int64  `json:"next_offset"`
	Lost       int64  `json:"lost"`
	Data       string `json:"data"`
	Tail       string `json:"tail"`
	Done       bool   `json:"done"`
	ExitCode   *int   `json:"exit_code"`
}

// SessionOptions configure CreateSession.
type SessionOptions struct {
	ID  string            `json:"id,omitempty"`
	Cwd string            `json:"cwd,omitempty"`
	Env map[string]string `json:"env,omitempty"`
}

// DefaultSession is the session that serves "run" actions.
const DefaultSession = "default"

func sessionPath(id string, rest ...string) string {
	p := "/sessions/" + url.PathEscape(id)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

func (c *Client) postJSON(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	return c.do(ctx, http.MethodPost, path, body, out)
}

// CreateSession starts a new shell session.
func (c *Client) CreateSession(ctx context.Context, o SessionOptions) (*Session, error) {
	var s Session
	if err := c.postJSON(ctx, "/sessions", o, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ListSessions lists the shell sessions.
func (c *Client) ListSessions(ctx context.Context) ([]Session, error) {
	var out []Session
	if err := c.do(ctx, http.MethodGet, "/sessions", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetSession describes one session.
func (c *Client) GetSession(ctx context.Context, id string) (*Session, error) {
	var s Session
	if err := c.do(ctx, http.MethodGet, sessionPath(id), nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// DeleteSession ends a session and everything it started.
func (c *Client) DeleteSession(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, sessionPath(id), nil, nil)
}

// StartCommand starts a command in a session and returns at once.
func (c *Client) StartCommand(ctx context.Context, session, command string) (*Command, error) {
	var cmd Command
	if err := c.postJSON(ctx, sessionPath(session, "commands"), map[string]string{"command": command}, &cmd); err != nil {
		return nil, err
	}
	return &cmd, nil
}

// Command returns a command's state.
func (c *Client) Command(ctx context.Context, session string, id int64) (*Command, error) {
	var cmd Command
	if err := c.do(ctx, http.MethodGet, sessionPath(session, "commands", strconv.FormatInt(id, 10)), nil, &cmd); err != nil {
		return nil, err
	}
	return &cmd, nil
}

// Output reads a command's output from offset, waiting up to wait for some
// when there is none yet.
func (c *Client) Output(ctx context.Context, session string, id, offset int64, wait time.Duration) (*OutputChunk, error) {
	q := url.Values{"offset": {strconv.FormatInt(offset, 10)}, "wait": {strconv.FormatInt(wait.Milliseconds(), 10)}}
	var ch OutputChunk
	path := sessionPath(session, "commands", strconv.FormatInt(id, 10), "output") + "?" + q.Encode()
	if err := c.do(ctx, http.MethodGet, path, nil, &ch); err != nil {
		return nil, err
	}
	return &ch, nil
}

// SendInput types text into the running command, followed by Enter when
// enter is set.
func (c *Client) SendInput(ctx context.Context, session, text string, enter bool) error {
	return c.postJSON(ctx, sessionPath(session, "input"), map[string]any{"text": text, "enter": enter}, nil)
}

// SendKey sends a control key such as "C-c" to the running command.
func (c *Client) SendKey(ctx context.Context, session, key string) error {
	return c.postJSON(ctx, sessionPath(session, "input"), map[string]string{"key": key}, nil)
}

// Signal sends SIGINT, SIGTERM or SIGKILL to the running command's process
// group; the session survives.
func (c *Client) Signal(ctx context.Context, session, signal string) error {
	return c.postJSON(ctx, sessionPath(session, "signal"), map[string]string{"signal": signal}, nil)
}

// Resize sets a session's terminal size.
func (c *Client) Resize(ctx context.Context, session string, rows, cols uint16) error {
	return c.postJSON(ctx, sessionPath(session, "resize"), map[string]uint16{"rows": rows, "cols": cols}, nil)
}
