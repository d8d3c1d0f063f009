package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/actionserver/actionserver/api"
)

// PipeOptions adjust a piped command (StartPipe).
type PipeOptions struct {
	// Cwd is where it starts; empty means the session's directory.
	Cwd string
	// Env adds variables to the session's environment.
	Env map[string]string
}

// StartPipe starts a command outside the session's terminal, with its
// output and errors on a pipe, and returns at once. Much faster than
// StartCommand for bulk output; nothing it changes (cd, variables)
// persists, and programs see no terminal. Its output is read as any
// command's is (Output, Stream).
func (c *Client) StartPipe(ctx context.Context, session, command string, o PipeOptions) (*api.Command, error) {
	body := api.StartCommandRequest{Command: command, Pipe: true, Cwd: o.Cwd, Env: o.Env}
	var cmd api.Command
	if err := c.postJSON(ctx, sessionPath(session, "commands"), body, &cmd); err != nil {
		return nil, err
	}
	return &cmd, nil
}

// SignalPipe sends SIGINT, SIGTERM or SIGKILL to a running piped command's
// process group.
func (c *Client) SignalPipe(ctx context.Context, session string, id int64, signal string) error {
	return c.postJSON(ctx, sessionPath(session, "signal"), api.SignalRequest{Signal: signal, Command: &id}, nil)
}

// RawChunk is one raw read of a command's output (OutputRaw).
type RawChunk struct {
	Offset, NextOffset, Lost int64
	// Data is the output's bytes, appended to the buffer OutputRaw got.
	Data []byte
	Tail string
	Done bool
	// ExitCode is set once Done.
	ExitCode *int
}

// OutputRaw reads a command's output from offset as raw bytes, waiting up
// to wait for some, as Output does; max bounds the bytes (0: the server's
// bound, 1 MiB). No JSON is involved: it is the cheap way to follow bulk
// output. Data is appended to buf, which may be nil.
func (c *Client) OutputRaw(ctx context.Context, session string, id, offset int64, wait time.Duration, max int64, buf []byte) (*RawChunk, error) {
	q := url.Values{api.QueryFormat: {api.FormatRaw}, "offset": {strconv.FormatInt(offset, 10)}, "wait": {strconv.FormatInt(wait.Milliseconds(), 10)}}
	if max > 0 {
		q.Set("max", strconv.FormatInt(max, 10))
	}
	path := sessionPath(session, "commands", strconv.FormatInt(id, 10), "output") + "?" + q.Encode()
	req, err := c.newRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, responseError(resp.StatusCode, body)
	}
	h := resp.Header
	ch := &RawChunk{Done: h.Get(api.HeaderDone) == "true"}
	var errs []error
	for _, f := range []struct {
		name string
		to   *int64
	}{{api.HeaderOffset, &ch.Offset}, {api.HeaderNext, &ch.NextOffset}, {api.HeaderLost, &ch.Lost}} {
		n, err := strconv.ParseInt(h.Get(f.name), 10, 64)
		errs = append(errs, err)
		*f.to = n
	}
	if v := h.Get(api.HeaderExitCode); v != "" {
		code, err := strconv.Atoi(v)
		errs = append(errs, err)
		ch.ExitCode = &code
	}
	if v := h.Get(api.HeaderTail); v != "" {
		tail, err := strconv.Unquote(v)
		errs = append(errs, err)
		ch.Tail = tail
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("GET %s: headers: %w", path, err)
	}
	if resp.ContentLength > 0 {
		buf = slices.Grow(buf, int(resp.ContentLength))
	}
	b := bytes.NewBuffer(buf)
	if _, err := b.ReadFrom(resp.Body); err != nil {
		return nil, fmt.Errorf("GET %s: read response: %w", path, err)
	}
	ch.Data = b.Bytes()
	return ch, nil
}
