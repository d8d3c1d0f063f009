package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/executor"
)

// Server-Sent Events of a command's output. Each "output" event carries the
// offset after its data as its id, so a client that reconnects with
// Last-Event-ID resumes exactly where it stopped. Events:
//
//	event: output  data: {"offset": N, "data": "..."}   id: N+len
//	event: lost    data: {"from": N, "to": M, "bytes": M-N}  (dropped output)
//	event: tail    data: {"offset": N, "tail": "..."}   (the line still changing)
//	event: exit    data: <command status>                (last event)
//
// A comment line is sent every 15 s so proxies keep the connection open.

const (
	sseKeepAlive = 15 * time.Second
	sseChunk     = 64 << 10
)

func (s *Server) streamOutput(c *gin.Context) {
	cmd, ok := s.command(c)
	if !ok {
		return
	}
	off := int64(0)
	if v := c.GetHeader("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			detail(c, http.StatusBadRequest, api.CodeInvalid, "Last-Event-ID must be an output offset")
			return
		}
		off = n
	} else if v := c.Query("offset"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			detail(c, http.StatusBadRequest, api.CodeInvalid, "offset must be a non-negative integer")
			return
		}
		off = n
	}
	w := startSSE(c)
	ev := newEventWriter(w)

	cmd.Follow(c.Request.Context(), off, executor.FollowOptions{Chunk: sseChunk, KeepAlive: sseKeepAlive},
		func(e executor.FollowEvent) bool {
			switch e.Kind {
			case executor.FollowLost:
				return ev.write(api.EventLost, e.To, api.LostEvent{From: e.From, To: e.To, Bytes: e.Lost})
			case executor.FollowOutput:
				return ev.write(api.EventOutput, e.Next, api.OutputEvent{Offset: e.Offset, Data: e.Data})
			case executor.FollowTail:
				return ev.write(api.EventTail, -1, api.TailEvent{Offset: e.Offset, Tail: e.Tail})
			case executor.FollowExit:
				ev.write(api.EventExit, e.Next, commandInfo(cmd.Info()))
				w.Flush()
				return false
			case executor.FollowKeepAlive:
				if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
					return false
				}
			}
			w.Flush() // FollowIdle, FollowKeepAlive
			return true
		})
}

// startSSE sends the headers of an event stream, so the client knows at
// once that the stream is in place.
func startSSE(c *gin.Context) gin.ResponseWriter {
	w := c.Writer
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // no buffering proxies
	w.WriteHeader(http.StatusOK)
	w.Flush()
	return w
}

// eventWriter writes SSE events. Each is built in one reused buffer and
// written at once: following bulk output, an event is a chunk of up to
// sseChunk bytes, and encoding each into a new slice, then formatting that
// into the response, copied every byte twice more.
type eventWriter struct {
	w   gin.ResponseWriter
	buf bytes.Buffer
	enc *json.Encoder // into buf; as json.Marshal, plus a newline
}

func newEventWriter(w gin.ResponseWriter) *eventWriter {
	e := &eventWriter{w: w}
	e.enc = json.NewEncoder(&e.buf)
	return e
}

// write writes one event; id < 0 writes none. It reports whether the
// client is still there.
func (e *eventWriter) write(event string, id int64, data any) bool {
	e.buf.Reset()
	e.buf.WriteString("event: ")
	e.buf.WriteString(event)
	if id >= 0 {
		e.buf.WriteString("\nid: ")
		e.buf.Write(strconv.AppendInt(e.buf.AvailableBuffer(), id, 10))
	}
	e.buf.WriteString("\ndata: ")
	if err := e.enc.Encode(data); err != nil {
		return false
	}
	e.buf.WriteByte('\n') // Encode ended the data line; this ends the event
	_, err := e.w.Write(e.buf.Bytes())
	return err == nil
}
