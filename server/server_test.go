package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/executor"
)

// newTestServer serves a Server on loopback; ready gives it a real
// executor (a bash session).
func newTestServer(t *testing.T, ready bool, extra func(*gin.Engine)) (*Server, string) {
	t.Helper()
	s := New(Options{IdleTrim: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if extra != nil {
		extra(s.engine)
	}
	if ready {
		e, err := executor.New(context.Background(), executor.Options{
			WorkDir: t.TempDir(),
			Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()},
		})
		require.NoError(t, err)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			e.Close(ctx)
		})
		s.SetReady(e)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func TestRecover_PanicBecomesTheGeneric500(t *testing.T) {
	_, url := newTestServer(t, false, func(r *gin.Engine) {
		r.GET("/panic", func(*gin.Context) { panic("handler bug") })
		r.GET("/abort", func(*gin.Context) { panic(http.ErrAbortHandler) })
	})
	resp, err := http.Get(url + "/panic")
	require.NoError(t, err, "a panic must not cut the connection")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	assert.JSONEq(t, `{"detail": "An unexpected error occurred. Please try again later."}`, string(body))

	// A deliberate abort still cuts the response, as net/http intends.
	_, err = http.Get(url + "/abort")
	assert.Error(t, err)

	// The server goes on answering.
	resp, err = http.Get(url + "/server_info")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestServerInfo_EveryKeyWithItsJSONType(t *testing.T) {
	// The keys and types of upstream's report (contract: GET /server_info);
	// integer counts must not be encoded as floats.
	keys := []struct {
		path    string
		integer bool
	}{
		{"uptime", false},
		{"idle_time", false},
		{"resources.cpu_percent", false},
		{"resources.memory.rss", true},
		{"resources.memory.vms", true},
		{"resources.memory.percent", false},
		{"resources.disk.total", true},
		{"resources.disk.used", true},
		{"resources.disk.free", true},
		{"resources.disk.percent", false},
		{"resources.io.read_bytes", true},
		{"resources.io.write_bytes", true},
	}
	for _, ready := range []bool{false, true} {
		name := map[bool]string{false: "starting", true: "ready"}[ready]
		t.Run(name, func(t *testing.T) {
			_, url := newTestServer(t, ready, nil)
			resp, err := http.Get(url + "/server_info")
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			dec := json.NewDecoder(resp.Body)
			dec.UseNumber()
			var doc map[string]any
			require.NoError(t, dec.Decode(&doc))

			for _, k := range keys {
				v := lookup(doc, k.path)
				n, ok := v.(json.Number)
				if !assert.True(t, ok, "%s is a JSON number, got %#v", k.path, v) {
					continue
				}
				if k.integer {
					_, err := n.Int64()
					assert.NoError(t, err, "%s is an integer, got %s", k.path, n)
				}
				f, err := n.Float64()
				require.NoError(t, err)
				assert.GreaterOrEqual(t, f, 0.0, k.path)
			}
			rss, _ := lookup(doc, "resources.memory.rss").(json.Number).Int64()
			assert.Positive(t, rss, "the server's own memory")
			total, _ := lookup(doc, "resources.disk.total").(json.Number).Int64()
			assert.Positive(t, total, "the size of /")
		})
	}
}

// lookup follows a dotted path through nested JSON objects; nil when a
// step is missing.
func lookup(doc map[string]any, path string) any {
	var v any = doc
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func TestAlive_HeldUntilReadyThen503(t *testing.T) {
	s, url := newTestServer(t, false, nil)
	held := make(chan struct{}, 2)
	s.aliveHeld = func() { held <- struct{}{} }
	get := func() (int, string) {
		resp, err := http.Get(url + "/alive")
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// Nothing makes it ready: the probe is answered 503 after the hold.
	code, body := get()
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.JSONEq(t, `{"status": "not initialized"}`, body)
	<-held

	// A probe waiting when the server becomes ready gets 200.
	type answer struct {
		code int
		body string
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.Get(url + "/alive")
		if err != nil {
			got <- answer{}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- answer{resp.StatusCode, string(b)}
	}()
	e, err := executor.New(context.Background(), executor.Options{
		WorkDir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()},
	})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close(context.Background()) })
	<-held
	s.SetReady(e)
	a := <-got
	assert.Equal(t, http.StatusOK, a.code)
	assert.JSONEq(t, `{"status": "ok"}`, a.body)
}
