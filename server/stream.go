package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
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
			detail(c, http.StatusBadRequest, "Last-Event-ID must be an output offset")
			return
		}
		off = n
	} else if v := c.Query("offset"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			detail(c, http.StatusBadRequest, "offset must be a non-negative integer")
			return
		}
		off = n
	}
	w := startSSE(c)

	ctx := c.Request.Context()
	keepAlive := time.NewTicker(sseKeepAlive)
	defer keepAlive.Stop()
	lastTail := ""
	for {
		changed := cmd.Changed()
		ch := cmd.Read(off, sseChunk)
		if ch.Lost > 0 {
			if !writeEvent(w, api.EventLost, ch.Offset, api.LostEvent{From: off, To: ch.Offset, Bytes: ch.Lost}) {
				return
			}
		}
		if ch.Data != "" {
			if !writeEvent(w, api.EventOutput, ch.NextOffset, api.OutputEvent{Offset: ch.Offset, Data: ch.Data}) {
				return
			}
		}
		off = ch.NextOffset
		if ch.Done {
			writeEvent(w, api.EventExit, off, cmd.Info())
			w.Flush()
			return
		}
		if ch.Data != "" {
			continue // drain what is there before waiting
		}
		if ch.Tail != lastTail {
			lastTail = ch.Tail
			if !writeEvent(w, api.EventTail, -1, api.TailEvent{Offset: off, Tail: ch.Tail}) {
				return
			}
		}
		w.Flush()
		select {
		case <-changed:
			// Let more join this event (see gather): an event per
			// terminal read cost a wake-up and an encoding each.
			gather(ctx, cmd, off, sseChunk, time.Now().Add(gatherFor))
		case <-keepAlive.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			w.Flush()
		case <-ctx.Done():
			return
		}
	}
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

// writeEvent writes one SSE event; id < 0 writes none. It reports whether
// the client is still there.
func writeEvent(w gin.ResponseWriter, event string, id int64, data any) bool {
	b, err := json.Marshal(data)
	if err != nil {
		return false
	}
	if id >= 0 {
		_, err = fmt.Fprintf(w, "event: %s\nid: %d\ndata: %s\n\n", event, id, b)
	} else {
		_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}
	return err == nil
}
