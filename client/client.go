// Package client is the host-side Go client of the action server. It speaks
// only the wire format (package event), never imports the server, and is
// what actionctl, the end-to-end tests and Go backends use.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/event"
)

// Client talks to one action server. Its zero value is not usable; create
// one with New. It is safe for concurrent use.
type Client struct {
	base   string
	apiKey string
	hc     *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends key as X-Session-API-Key on every request.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient uses hc instead of a default client. Deadlines come from
// the contexts and actions, so hc should have no Timeout of its own.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// New returns a client for the server at baseURL (e.g. http://127.0.0.1:8000).
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), hc: &http.Client{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Error is a non-2xx answer from the server.
type Error struct {
	StatusCode int
	// Detail is the server's "detail" message, or the body if it had none.
	Detail string
	// Code is the envelope's machine-readable code (api.Code...), when the
	// route sends one.
	Code string
}

func (e *Error) Error() string {
	return fmt.Sprintf("action server: %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Detail)
}

// Sentinel errors an Error matches with errors.Is. The envelope's code
// decides; an answer without one (an OpenHands route, or an older server)
// is matched by its status, as the parenthesis says.
var (
	// ErrUnauthorized: the API key (or init token) is missing or wrong
	// (401, 403).
	ErrUnauthorized = errors.New("action server: invalid API key")
	// ErrNotReady: the server is still starting, not claimed yet, or
	// shutting down (503).
	ErrNotReady = errors.New("action server: not ready")
	// ErrNotFound: no such route, session, command or file (404).
	ErrNotFound = errors.New("action server: not found")
	// ErrBusy: the session is running another command (409).
	ErrBusy = errors.New("action server: busy")
	// ErrExists: a session with this id, or a file at this path, exists.
	// Only a server that sends codes tells it from ErrBusy.
	ErrExists = errors.New("action server: exists")
	// ErrBadRequest: the server refused the request as malformed or not
	// allowed, such as deleting the default session (400).
	ErrBadRequest = errors.New("action server: bad request")
)

// sentinelCodes are the envelope codes each sentinel stands for, and
// sentinelStatuses the statuses that stand for it when there is no code.
var (
	sentinelCodes = map[error][]string{
		ErrUnauthorized: {api.CodeUnauthorized},
		ErrNotReady:     {api.CodeUnavailable},
		ErrNotFound:     {api.CodeNotFound},
		ErrBusy:         {api.CodeBusy},
		ErrExists:       {api.CodeExists},
		ErrBadRequest:   {api.CodeInvalid, api.CodePathEscapes},
	}
	sentinelStatuses = map[error][]int{
		ErrUnauthorized: {http.StatusUnauthorized, http.StatusForbidden},
		ErrNotReady:     {http.StatusServiceUnavailable},
		ErrNotFound:     {http.StatusNotFound},
		ErrBusy:         {http.StatusConflict},
		ErrBadRequest:   {http.StatusBadRequest},
	}
)

// Is matches the sentinel errors: by code when the answer has one, else
// by status.
func (e *Error) Is(target error) bool {
	if e.Code != "" {
		return slices.Contains(sentinelCodes[target], e.Code)
	}
	return slices.Contains(sentinelStatuses[target], e.StatusCode)
}

// Temporary reports whether the request may work if tried again: the
// server is not ready, or failed on its side.
func (e *Error) Temporary() bool {
	return e.Code == api.CodeUnavailable || e.StatusCode == http.StatusServiceUnavailable || e.StatusCode >= 500
}

// newRequest builds a request to the server carrying the API key.
func (c *Client) newRequest(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if c.apiKey != "" {
		req.Header.Set(api.HeaderAPIKey, c.apiKey)
	}
	return req, nil
}

// do sends a request and decodes a JSON answer into out (unless nil).
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := c.newRequest(ctx, method, path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read response: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return responseError(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = data
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode response: %w", method, path, err)
	}
	return nil
}

func responseError(status int, body []byte) error {
	// Detail is raw: upstream's validation errors hold a list there.
	var env struct {
		Detail json.RawMessage `json:"detail"`
		Code   string          `json:"code"`
	}
	e := &Error{StatusCode: status, Detail: strings.TrimSpace(string(body))}
	if json.Unmarshal(body, &env) == nil {
		e.Code = env.Code
	}
	if len(env.Detail) > 0 {
		var s string
		if json.Unmarshal(env.Detail, &s) == nil {
			e.Detail = s
		} else {
			e.Detail = string(env.Detail)
		}
	}
	return e
}

// Alive returns nil when the server is ready to execute actions.
func (c *Client) Alive(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/alive", nil, nil)
}

// WaitUntilAlive polls /alive until the server is ready or ctx ends,
// backing off from 5 ms to 1 s between connection errors and non-2xx
// answers.
func (c *Client) WaitUntilAlive(ctx context.Context) error {
	delay := 5 * time.Millisecond
	for {
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.Alive(attempt)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for action server: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}

// ServerInfo returns the server's uptime, idle time and resources.
func (c *Client) ServerInfo(ctx context.Context) (*api.ServerInfo, error) {
	var info api.ServerInfo
	if err := c.do(ctx, http.MethodGet, "/server_info", nil, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// OpenAPI returns the server's OpenAPI description of its routes, as JSON.
func (c *Client) OpenAPI(ctx context.Context) (json.RawMessage, error) {
	var spec json.RawMessage
	if err := c.do(ctx, http.MethodGet, "/openapi.json", nil, &spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// VSCodeToken returns the connection token of the server's VS Code, or ""
// when the vscode plugin is not loaded or VS Code was skipped.
func (c *Client) VSCodeToken(ctx context.Context) (string, error) {
	var out struct {
		Token *string `json:"token"`
	}
	if err := c.do(ctx, http.MethodGet, "/vscode/connection_token", nil, &out); err != nil {
		return "", err
	}
	if out.Token == nil {
		return "", nil
	}
	return *out.Token, nil
}

// executeSlack is added to an action's timeout for the HTTP deadline, as
// the OpenHands host does: the server answers at the timeout, the slack
// covers the transfer.
const executeSlack = 5 * time.Second

// Execute runs an action and returns its observation. When the action has a
// hard timeout, the request's deadline is that timeout plus five seconds.
func (c *Client) Execute(ctx context.Context, a event.Action) (event.Observation, error) {
	raw, err := event.EncodeAction(a)
	if err != nil {
		return nil, err
	}
	// raw is compact JSON already: wrapping it by hand gives the bytes
	// json.Marshal would, without another pass over the whole action.
	body := make([]byte, 0, len(raw)+len(`{"action":}`))
	body = append(append(append(body, `{"action":`...), raw...), '}')
	if t := a.ActionHeader().HardTimeout(); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t+executeSlack)
		defer cancel()
	}
	var out json.RawMessage
	if err := c.do(ctx, http.MethodPost, "/execute_action", body, &out); err != nil {
		return nil, err
	}
	return event.DecodeObservation(out)
}

// RunOptions are the optional fields of a "run" action.
type RunOptions struct {
	// Timeout is the hard timeout; 0 sends none (no hard timeout).
	Timeout time.Duration
	// Blocking waits for completion regardless of the no-change timeout.
	Blocking bool
	IsInput  bool
	Hidden   bool
	// Static runs in a fresh shell started in Cwd (or the workspace).
	Static bool
	Cwd    string
}

// Run runs a shell command and returns its observation. A command the
// server rejects (several commands at once) comes back as an *event.ErrorObservation
// observation wrapped in an error of type *ObservationError.
func (c *Client) Run(ctx context.Context, command string, opts RunOptions) (*event.CmdOutput, error) {
	a := event.NewCmdRun(command)
	a.IsInput, a.Blocking, a.Hidden, a.IsStatic = opts.IsInput, opts.Blocking, opts.Hidden, opts.Static
	if opts.Cwd != "" {
		a.Cwd = &opts.Cwd
	}
	if opts.Timeout > 0 {
		t := opts.Timeout.Seconds()
		a.Timeout = &t
	}
	obs, err := c.Execute(ctx, a)
	if err != nil {
		return nil, err
	}
	out, ok := obs.(*event.CmdOutput)
	if !ok {
		return nil, &ObservationError{Observation: obs}
	}
	return out, nil
}

// ObservationError wraps an observation of an unexpected type, usually an
// *event.ErrorObservation the agent would have been shown.
type ObservationError struct {
	Observation event.Observation
}

func (e *ObservationError) Error() string {
	return fmt.Sprintf("%s observation: %s", e.Observation.Type(), e.Observation.Text())
}
