package server

import (
	"runtime/debug"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// idleTrimmer hands freed memory back to the kernel once the server has had
// no request in flight for a while. The Go runtime keeps freed heap pages for
// reuse, which suits a busy process; a sandbox daemon is busy in bursts and
// then sits idle in one of thousands of containers, where those pages are
// better returned. Trimming costs one GC, paid only after a quiet period.
type idleTrimmer struct {
	after time.Duration
	free  func() // debug.FreeOSMemory; replaceable in tests

	mu       sync.Mutex
	inflight int
	timer    *time.Timer
	dirty    bool // requests ran since the last trim
}

func newIdleTrimmer(after time.Duration) *idleTrimmer {
	t := &idleTrimmer{after: after, free: debug.FreeOSMemory}
	t.timer = time.AfterFunc(time.Hour, t.fire)
	t.timer.Stop()
	return t
}

// middleware counts requests in flight and arms the trim when the last one
// ends. Health and status checks do not count: they allocate next to
// nothing, and a monitor polling /alive or /server_info more often than the
// quiet period would otherwise keep the memory of the last burst forever.
func (t *idleTrimmer) middleware(c *gin.Context) {
	if p := c.Request.URL.Path; p == "/alive" || p == "/server_info" || p == livezPath || p == readyzPath {
		c.Next()
		return
	}
	t.mu.Lock()
	t.inflight++
	t.dirty = true
	t.timer.Stop()
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.inflight--
		if t.inflight == 0 {
			t.timer.Reset(t.after)
		}
		t.mu.Unlock()
	}()
	c.Next()
}

func (t *idleTrimmer) fire() {
	t.mu.Lock()
	run := t.inflight == 0 && t.dirty
	t.dirty = false
	t.mu.Unlock()
	if run {
		t.free()
	}
}
