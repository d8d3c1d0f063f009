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
	timer    trimTimer
	dirty    bool // requests ran since the last trim
}

// trimTimer is the part of *time.Timer the trimmer uses, so tests can
// decide when the quiet period is over instead of sleeping through it.
type trimTimer interface {
	Reset(time.Duration) bool
	Stop() bool
}

func newIdleTrimmer(after time.Duration) *idleTrimmer {
	return newIdleTrimmerWith(after, func(f func()) trimTimer { return time.AfterFunc(time.Hour, f) })
}

// newIdleTrimmerWith builds the trimmer on a timer made by newTimer, which
// must call its argument when the timer fires.
func newIdleTrimmerWith(after time.Duration, newTimer func(fire func()) trimTimer) *idleTrimmer {
	t := &idleTrimmer{after: after, free: debug.FreeOSMemory}
	t.timer = newTimer(t.fire)
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
