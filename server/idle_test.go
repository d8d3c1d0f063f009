package server

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIdleTrimmer_TrimsOnceAfterQuietAndNeverDuringARequest(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	tr := newIdleTrimmer(20 * time.Millisecond)
	var trims atomic.Int32
	tr.free = func() { trims.Add(1) }

	release := make(chan struct{})
	r := gin.New()
	r.Use(tr.middleware)
	r.GET("/slow", func(c *gin.Context) { <-release; c.Status(http.StatusOK) })
	r.GET("/fast", func(c *gin.Context) { c.Status(http.StatusOK) })
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)

	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Get(srv.URL + "/slow")
		if err == nil {
			resp.Body.Close()
		}
	}()
	// A fast request ends while the slow one is still in flight: no trim.
	resp, err := http.Get(srv.URL + "/fast")
	require.NoError(t, err)
	resp.Body.Close()
	time.Sleep(100 * time.Millisecond)
	assert.Zero(t, trims.Load(), "trimmed while a request was in flight")

	close(release)
	<-done
	require.Eventually(t, func() bool { return trims.Load() == 1 }, 5*time.Second, 5*time.Millisecond)
	// Idle without new requests: no further trims.
	time.Sleep(100 * time.Millisecond)
	assert.EqualValues(t, 1, trims.Load())
}

func TestIdleTrimmer_StatusPollsDoNotPostponeTheTrim(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	tr := newIdleTrimmer(200 * time.Millisecond)
	var trims atomic.Int32
	tr.free = func() { trims.Add(1) }
	r := gin.New()
	r.Use(tr.middleware)
	r.GET("/work", func(c *gin.Context) { c.Status(http.StatusOK) })
	r.GET("/alive", func(c *gin.Context) { c.Status(http.StatusOK) })
	r.GET("/server_info", func(c *gin.Context) { c.Status(http.StatusOK) })
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	get := func(path string) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
	}

	get("/work")
	// A monitor polls far more often than the quiet period; the trim after
	// the work still comes.
	deadline := time.Now().Add(5 * time.Second)
	for trims.Load() == 0 && time.Now().Before(deadline) {
		get("/alive")
		get("/server_info")
		time.Sleep(20 * time.Millisecond)
	}
	assert.EqualValues(t, 1, trims.Load(), "status polls kept the server from trimming")
}
