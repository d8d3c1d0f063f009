package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/actionserver/actionserver/api"
)

// DefaultSession is the session that serves "run" actions.
const DefaultSession = api.DefaultSession

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
func (c *Client) CreateSession(ctx context.Context, o api.CreateSessionRequest) (*api.Session, error) {
	var s api.Session
	if err := c.postJSON(ctx, "/sessions", o, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ListSessions lists the shell sessions.
func (c *Client) ListSessions(ctx context.Context) ([]api.Session, error) {
	var out []api.Session
	if err := c.do(ctx, http.MethodGet, "/sessions", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetSession describes one session.
func (c *Client) GetSession(ctx context.Context, id string) (*api.Session, error) {
	var s api.Session
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
func (c *Client) StartCommand(ctx context.Context, session, command string) (*api.Command, error) {
	var cmd api.Command
	if err := c.postJSON(ctx, sessionPath(session, "commands"), api.StartCommandRequest{Command: command}, &cmd); err != nil {
		return nil, err
	}
	return &cmd, nil
}

// Command returns a command's state.
func (c *Client) Command(ctx context.Context, session string, id int64) (*api.Command, error) {
	var cmd api.Command
	if err := c.do(ctx, http.MethodGet, sessionPath(session, "commands", strconv.FormatInt(id, 10)), nil, &cmd); err != nil {
		return nil, err
	}
	return &cmd, nil
}

// Output reads a command's output from offset, waiting up to wait for some
// when there is none yet. It reads the raw form (see OutputRaw): decoding
// output as JSON cost more CPU than the server spent producing it, and the
// raw form's offsets count the very bytes Data holds.
func (c *Client) Output(ctx context.Context, session string, id, offset int64, wait time.Duration) (*api.OutputChunk, error) {
	raw, err := c.OutputRaw(ctx, session, id, offset, wait, 0, nil)
	if err != nil {
		return nil, err
	}
	return &api.OutputChunk{Offset: raw.Offset, NextOffset: raw.NextOffset, Lost: raw.Lost, Data: string(raw.Data),
		Tail: raw.Tail, Done: raw.Done, ExitCode: raw.ExitCode}, nil
}

// SendInput types text into the running command, followed by Enter when
// enter is set.
func (c *Client) SendInput(ctx context.Context, session, text string, enter bool) error {
	return c.postJSON(ctx, sessionPath(session, "input"), api.InputRequest{Text: &text, Enter: &enter}, nil)
}

// SendKey sends a control key such as "C-c" to the running command.
func (c *Client) SendKey(ctx context.Context, session, key string) error {
	return c.postJSON(ctx, sessionPath(session, "input"), api.InputRequest{Key: key}, nil)
}

// Signal sends SIGINT, SIGTERM or SIGKILL to the running command's process
// group; the session survives.
func (c *Client) Signal(ctx context.Context, session, signal string) error {
	return c.postJSON(ctx, sessionPath(session, "signal"), api.SignalRequest{Signal: signal}, nil)
}

// Resize sets a session's terminal size.
func (c *Client) Resize(ctx context.Context, session string, rows, cols uint16) error {
	return c.postJSON(ctx, sessionPath(session, "resize"), api.ResizeRequest{Rows: rows, Cols: cols}, nil)
}
