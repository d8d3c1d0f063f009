package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/actionserver/actionserver/api"
)

// StreamEvent is one event of a command's output stream.
type StreamEvent struct {
	// Kind is "output" (Data at Offset, up to Next), "lost" (Lost bytes
	// were dropped by the server's buffer before Offset), "tail" (Tail is
	// the text after Offset that may still change), "exit" (the command
	// finished: Command holds its state; the last event), or "reconnect"
	// (the connection dropped and Err says why; the stream resumes by
	// itself from Offset).
	Kind    string
	Offset  int64
	Next    int64
	Data    string
	Lost    int64
	Tail    string
	Command *api.Command
	Err     error
}

// StreamOptions configure Stream.
type StreamOptions struct {
	// Offset is where to start; 0 is the first byte of output.
	Offset int64
	// MaxRetryDelay caps the back-off between reconnections (default 2 s).
	MaxRetryDelay time.Duration
}

// Stream follows a command's output until it finishes. When the connection
// drops, it reconnects by itself and resumes from the last offset received,
// so every byte arrives exactly once (or is reported lost, if the server
// dropped it meanwhile). The channel is closed after the exit event, or
// when ctx ends. Errors that retrying cannot fix (unknown command, invalid
// key) end the stream with an event whose Err is set.
func (c *Client) Stream(ctx context.Context, session string, id int64, o StreamOptions) <-chan StreamEvent {
	if o.MaxRetryDelay <= 0 {
		o.MaxRetryDelay = 2 * time.Second
	}
	out := make(chan StreamEvent, 16)
	go func() {
		defer close(out)
		off := o.Offset
		delay := 20 * time.Millisecond
		send := func(ev StreamEvent) bool {
			select {
			case out <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			done, progressed, err := c.streamOnce(ctx, session, id, &off, send)
			if done || ctx.Err() != nil {
				return
			}
			var apiErr *Error
			if errors.As(err, &apiErr) && !apiErr.Temporary() {
				send(StreamEvent{Kind: "exit", Offset: off, Err: err})
				return
			}
			if progressed {
				delay = 20 * time.Millisecond
			}
			if !send(StreamEvent{Kind: "reconnect", Offset: off, Err: err}) {
				return
			}
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return
			}
			delay = min(2*delay, o.MaxRetryDelay)
		}
	}()
	return out
}

// streamOnce reads one SSE connection, advancing *off. It reports whether
// the stream ended (exit event) and whether any event arrived.
func (c *Client) streamOnce(ctx context.Context, session string, id int64, off *int64, send func(StreamEvent) bool) (done, progressed bool, err error) {
	path := sessionPath(session, "commands", strconv.FormatInt(id, 10), "stream")
	req, err := c.newRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return false, false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", strconv.FormatInt(*off, 10))
	resp, err := c.hc.Do(req)
	if err != nil {
		return false, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return false, false, responseError(resp.StatusCode, body)
	}
	err = readSSE(resp.Body, func(sse sseEvent) (bool, error) {
		ev, err := decodeEvent(sse.Event, sse.Data, *off)
		if err != nil {
			return false, err
		}
		if ev.Kind == api.EventOutput && sse.ID >= 0 {
			ev.Next = sse.ID // the server's offset after this data
		}
		progressed = true
		switch ev.Kind {
		case api.EventOutput:
			*off = ev.Next
		case api.EventLost:
			*off = ev.Offset
		}
		if !send(ev) || ev.Kind == api.EventExit {
			done = true
			return false, nil
		}
		return true, nil
	})
	return done, progressed, err
}

func decodeEvent(kind string, data []byte, off int64) (StreamEvent, error) {
	ev := StreamEvent{Kind: kind, Offset: off}
	switch kind {
	case api.EventOutput:
		var d api.OutputEvent
		if err := json.Unmarshal(data, &d); err != nil {
			return ev, fmt.Errorf("decode output event: %w", err)
		}
		ev.Offset, ev.Data = d.Offset, d.Data
		ev.Next = d.Offset + int64(len(d.Data))
	case api.EventLost:
		var d api.LostEvent
		if err := json.Unmarshal(data, &d); err != nil {
			return ev, fmt.Errorf("decode lost event: %w", err)
		}
		ev.Offset, ev.Lost = d.To, d.Bytes
	case api.EventTail:
		var d api.TailEvent
		if err := json.Unmarshal(data, &d); err != nil {
			return ev, fmt.Errorf("decode tail event: %w", err)
		}
		ev.Offset, ev.Tail = d.Offset, d.Tail
	case api.EventExit:
		var cmd api.Command
		if err := json.Unmarshal(data, &cmd); err != nil {
			return ev, fmt.Errorf("decode exit event: %w", err)
		}
		ev.Command = &cmd
	default:
		return ev, fmt.Errorf("unknown event %q", kind)
	}
	return ev, nil
}
