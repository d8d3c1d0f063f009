package server

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTimer stands for the quiet period: the test sees whether it is armed
// and fires it when it chooses, so "nothing happened" needs no sleep.
type fakeTimer struct {
	mu    sync.Mutex
	armed bool
	fire  func()
}

func (f *fakeTimer) Reset(time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	was := f.armed
	f.armed = true
	return was
}

func (f *fakeTimer) Stop() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	was := f.armed
	f.armed = false
	return was
}

func (f *fakeTimer) isArmed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.armed
}

// elapse ends the quiet period if it is running, as the real timer would.
func (f *fakeTimer) elapse() {
	if f.Stop() {
		f.fire()
	}
}

// newFakeTrimmer returns a trimmer on a fake timer, counting its trims,
// behind a router with the routes the tests use.
func newFakeTrimmer(t *testing.T, release <-chan struct{}) (*fakeTimer, *int, func(path string)) {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	ft := &fakeTimer{}
	tr := newIdleTrimmerWith(20*time.Millisecond, func(fire func()) trimTimer { ft.fire = fire; return ft })
	var mu sync.Mutex
	trims := new(int)
	tr.free = func() { mu.Lock(); *trims++; mu.Unlock() }

	r := gin.New()
	r.Use(tr.middleware)
	r.GET("/slow", func(c *gin.Context) { <-release; c.Status(http.StatusOK) })
	for _, p := range []string{"/fast", "/alive", "/server_info"} {
		r.GET(p, func(c *gin.Context) { c.Status(http.StatusOK) })
	}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	get := func(path string) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
	}
	return ft, trims, get
}

func TestIdleTrimmer_TrimsOnceAfterQuietAndNeverDuringARequest(t *testing.T) {
	release := make(chan struct{})
	ft, trims, get := newFakeTrimmer(t, release)

	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		close(started)
		get("/slow")
	}()
	<-started
	// Wait until the slow request is in flight, then let a fast one end
	// beside it: the quiet period must not start while /slow runs.
	require.Eventually(t, func() bool { return slowInFlight(ft, get) }, 5*time.Second, time.Millisecond)
	assert.False(t, ft.isArmed(), "the quiet period started while a request was in flight")
	ft.elapse()
	assert.Zero(t, *trims, "trimmed while a request was in flight")

	close(release)
	<-done
	require.True(t, ft.isArmed(), "the last request's end starts the quiet period")
	ft.elapse()
	assert.Equal(t, 1, *trims)

	// Idle without new requests: the timer is not armed again, and a stray
	// fire does not trim twice.
	assert.False(t, ft.isArmed())
	ft.fire()
	assert.Equal(t, 1, *trims)
}

// slowInFlight sends a fast request and reports whether the quiet period
// stayed off after it ended, which it does only while /slow is in flight.
func slowInFlight(ft *fakeTimer, get func(string)) bool {
	get("/fast")
	return !ft.isArmed()
}

func TestIdleTrimmer_StatusPollsDoNotPostponeTheTrim(t *testing.T) {
	ft, trims, get := newFakeTrimmer(t, nil)

	get("/fast")
	require.True(t, ft.isArmed(), "work starts the quiet period")
	// A monitor polls far more often than the quiet period; its polls
	// neither stop nor restart it.
	for range 5 {
		get("/alive")
		get("/server_info")
		require.True(t, ft.isArmed(), "a status poll stopped the quiet period")
	}
	ft.elapse()
	assert.Equal(t, 1, *trims, "status polls kept the server from trimming")

	// Polls alone never arm it again.
	get("/alive")
	assert.False(t, ft.isArmed(), "a status poll started a quiet period")
}
