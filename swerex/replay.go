package swerex

import (
	"bytes"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"
)

// replay keeps the reply to the last request that carried an X-Request-ID,
// and answers a request with the same id from it without running it
// again: the client sends one id per call and retries with it, so a retry
// after a lost reply does not run a command twice. Upstream keeps only the
// last one too. Unlike upstream, which replays before it checks the key,
// a replay here needs the key like any request.
type replay struct {
	mu     sync.Mutex
	id     string
	status int
	header http.Header
	body   []byte
}

func (s *Server) replayLast(c *gin.Context) {
	id := c.GetHeader("X-Request-ID")
	if id == "" {
		return
	}
	r := &s.replay
	r.mu.Lock()
	if r.id == id {
		status, header, body := r.status, r.header.Clone(), r.body
		r.mu.Unlock()
		for k, v := range header {
			c.Writer.Header()[k] = v
		}
		c.Data(status, header.Get("Content-Type"), body)
		c.Abort()
		return
	}
	r.mu.Unlock()
	rec := &recorder{ResponseWriter: c.Writer}
	c.Writer = rec
	c.Next()
	if c.Request.Context().Err() != nil {
		return // nobody got this reply; a retry runs again
	}
	r.mu.Lock()
	r.id, r.status, r.header, r.body = id, rec.Status(), rec.Header().Clone(), rec.buf.Bytes()
	r.mu.Unlock()
}

// recorder copies a reply's body as it is written.
type recorder struct {
	gin.ResponseWriter
	buf bytes.Buffer
}

func (w *recorder) Write(b []byte) (int, error) {
	w.buf.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *recorder) WriteString(s string) (int, error) {
	w.buf.WriteString(s)
	return w.ResponseWriter.WriteString(s)
}
