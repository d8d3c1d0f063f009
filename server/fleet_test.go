package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/executor"
	"github.com/actionserver/actionserver/shell"
)

// lockedBuffer collects a server's log.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fleetServer serves a Server with opts on loopback; ready gives it a real
// executor. Its log (debug level) is returned.
func fleetServer(t *testing.T, opts Options, ready bool) (*Server, string, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	opts.IdleTrim = -1
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := New(opts)
	if ready {
		e, err := executor.New(context.Background(), executor.Options{
			WorkDir: t.TempDir(),
			Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()},
			Shell:   shell.Options{Budget: shell.NewOutputBudget(64 << 20)},
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
	return s, srv.URL, logs
}

// call sends a request with the given headers and returns the status and
// body.
func call(t *testing.T, method, url, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func runBody(command string) string {
	b, _ := json.Marshal(map[string]any{"action": map[string]any{"action": "run",
		"args": map[string]any{"command": command, "blocking": true}}})
	return string(b)
}

func TestProbes_ThroughTheServersLife(t *testing.T) {
	s, url, _ := fleetServer(t, Options{}, false)
	type want struct{ livez, readyz, alive, work int }
	check := func(stage string, w want) {
		code, _ := call(t, http.MethodGet, url+"/livez", "", nil)
		assert.Equal(t, w.livez, code, "%s: /livez", stage)
		code, _ = call(t, http.MethodGet, url+"/readyz", "", nil)
		assert.Equal(t, w.readyz, code, "%s: /readyz", stage)
		code, _ = call(t, http.MethodGet, url+"/alive", "", nil)
		assert.Equal(t, w.alive, code, "%s: /alive", stage)
		code, body := call(t, http.MethodPost, url+"/execute_action", runBody("true"), nil)
		assert.Equal(t, w.work, code, "%s: an action: %s", stage, body)
	}
	check("starting", want{livez: 200, readyz: 503, alive: 503, work: 503})

	e, err := executor.New(context.Background(), executor.Options{WorkDir: t.TempDir(),
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close(context.Background()) })
	s.SetReady(e)
	check("ready", want{livez: 200, readyz: 200, alive: 200, work: 200})

	s.Drain()
	check("draining", want{livez: 200, readyz: 503, alive: 200, work: 503})
	code, body := call(t, http.MethodPost, url+"/execute_action", runBody("true"), nil)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.JSONEq(t, `{"detail": "Server is shutting down"}`, body)
	code, _ = call(t, http.MethodGet, url+"/server_info", "", nil)
	assert.Equal(t, http.StatusOK, code, "status reports go on while draining")
}

func TestDrain_AcceptedRequestFinishesBeforeWaitIdleReturns(t *testing.T) {
	s, url, _ := fleetServer(t, Options{}, true)
	// The command's last step leaves a mark: WaitIdle returning before the
	// mark is there returned while the request was still in flight. (The
	// client may read the answer a moment after WaitIdle returns: the
	// handler is done once it has written it.)
	mark := filepath.Join(t.TempDir(), "done")
	finished := make(chan int, 1)
	go func() {
		code, _ := call(t, http.MethodPost, url+"/execute_action", runBody("sleep 1; touch "+mark), nil)
		finished <- code
	}()
	require.Eventually(t, func() bool { return s.inflight.Load() == 1 }, 10*time.Second, 5*time.Millisecond)

	s.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.WaitIdle(ctx, 0))
	assert.FileExists(t, mark, "WaitIdle returned while the accepted request was in flight")
	select {
	case code := <-finished:
		assert.Equal(t, http.StatusOK, code, "the request accepted before the drain was answered")
	case <-time.After(10 * time.Second):
		t.Fatal("the request accepted before the drain was never answered")
	}
}

func TestClaim_DeliversKeyEnvAndDirThenRotates(t *testing.T) {
	const token = "init-token-123"
	const key1, key2 = "first-key-abc", "second-key-def"
	s, url, logs := fleetServer(t, Options{InitToken: token}, true)
	bearer := map[string]string{"Authorization": "Bearer " + token}
	withKey := func(k string) map[string]string { return map[string]string{api.HeaderAPIKey: k} }

	// Unclaimed: only the probes and the report answer.
	code, body := call(t, http.MethodPost, url+"/execute_action", runBody("true"), nil)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "not claimed")
	for _, probe := range []struct {
		path string
		code int
	}{{"/livez", 200}, {"/readyz", 200}, {"/alive", 503}, {"/server_info", 200}, {"/metrics", 503}, {"/mcp/sse", 503}, {"/no/such/route", 503}} {
		code, _ := call(t, http.MethodGet, url+probe.path, "", nil)
		assert.Equal(t, probe.code, code, "unclaimed %s", probe.path)
	}

	dir := t.TempDir()
	claimBody := func(key string, env map[string]string, wd string) string {
		b, _ := json.Marshal(map[string]any{"api_key": key, "env": env, "working_dir": wd})
		return string(b)
	}
	for _, bad := range []struct {
		name    string
		headers map[string]string
		body    string
		code    int
	}{
		{"no token", nil, claimBody(key1, nil, ""), 403},
		{"wrong token", map[string]string{"Authorization": "Bearer wrong"}, claimBody(key1, nil, ""), 403},
		{"token without the scheme", map[string]string{"Authorization": token}, claimBody(key1, nil, ""), 403},
		{"empty key", bearer, claimBody("", nil, ""), 400},
		{"relative dir", bearer, claimBody(key1, nil, "rel"), 400},
		{"bad env name", bearer, claimBody(key1, map[string]string{"A-B": "x"}, ""), 400},
		{"unknown field", bearer, `{"api_key": "k", "nope": 1}`, 422},
	} {
		code, body := call(t, http.MethodPost, url+"/claim", bad.body, bad.headers)
		assert.Equal(t, bad.code, code, "%s: %s", bad.name, body)
	}
	code, _ = call(t, http.MethodPost, url+"/execute_action", runBody("true"), withKey(key1))
	assert.Equal(t, http.StatusServiceUnavailable, code, "refused claims deliver nothing")

	time.Sleep(100 * time.Millisecond) // an idle time to reset
	idleBefore := s.exec.Load().IdleTime()
	code, body = call(t, http.MethodPost, url+"/claim", claimBody(key1, map[string]string{"OWNER": "it's me"}, dir), bearer)
	require.Equal(t, http.StatusOK, code, body)
	assert.JSONEq(t, `{"rotated": false}`, body)
	assert.Less(t, s.exec.Load().IdleTime(), idleBefore, "the claim restarts idle time")

	code, body = call(t, http.MethodPost, url+"/execute_action", runBody(`echo "$OWNER"; pwd`), withKey(key1))
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `it's me\n`+dir)
	code, _ = call(t, http.MethodGet, url+"/alive", "", nil)
	assert.Equal(t, http.StatusOK, code)

	// A command started before the rotation survives it.
	code, body = call(t, http.MethodPost, url+"/sessions/default/commands", `{"command": "sleep 0.5; echo survived"}`, withKey(key1))
	require.Equal(t, http.StatusAccepted, code, body)
	var cmd struct{ ID int64 }
	require.NoError(t, json.Unmarshal([]byte(body), &cmd))

	code, body = call(t, http.MethodPost, url+"/claim", claimBody(key2, nil, ""), bearer)
	require.Equal(t, http.StatusOK, code, body)
	assert.JSONEq(t, `{"rotated": true}`, body)
	code, body = call(t, http.MethodGet, url+"/sessions", "", withKey(key1))
	assert.Equal(t, http.StatusForbidden, code, "the old key is refused at once: %s", body)
	code, body = call(t, http.MethodPost, url+"/claim", claimBody(key1, map[string]string{"X": "1"}, ""), bearer)
	assert.Equal(t, http.StatusConflict, code, "env cannot change while the default shell runs a command: %s", body)

	outURL := url + "/sessions/default/commands/" + strings.TrimSpace(jsonNumber(cmd.ID)) + "/output?wait=10"
	require.Eventually(t, func() bool {
		_, body := call(t, http.MethodGet, outURL, "", withKey(key2))
		return strings.Contains(body, "survived")
	}, 20*time.Second, 50*time.Millisecond, "the command's output, read with the new key")

	for _, k := range []string{key1, key2, token} {
		assert.NotContains(t, logs.String(), k, "keys never reach the log")
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestClaim_NotFoundWithoutLateBinding(t *testing.T) {
	_, url, _ := fleetServer(t, Options{APIKey: "k"}, true)
	code, _ := call(t, http.MethodPost, url+"/claim", `{"api_key": "x"}`, nil)
	assert.Equal(t, http.StatusForbidden, code, "keyed like any other route")
	code, body := call(t, http.MethodPost, url+"/claim", `{"api_key": "x"}`, map[string]string{api.HeaderAPIKey: "k"})
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, body, "Late binding is not enabled")
}

// scrape reads /metrics and parses it as Prometheus does.
func scrape(t *testing.T, url string, headers map[string]string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := call(t, http.MethodGet, url+"/metrics", "", headers)
	require.Equal(t, http.StatusOK, code, body)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err)
	return fams
}

// value returns the value of the series of fam whose labels include want.
func value(fam *dto.MetricFamily, want map[string]string) (float64, bool) {
	if fam == nil {
		return 0, false
	}
next:
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

func TestMetrics_ScrapedAndParsed(t *testing.T) {
	const key = "metrics-key"
	_, url, _ := fleetServer(t, Options{APIKey: key}, true)
	auth := map[string]string{api.HeaderAPIKey: key}
	code, body := call(t, http.MethodPost, url+"/sessions", `{"id": "m1"}`, auth)
	require.Equal(t, http.StatusCreated, code, body)
	code, body = call(t, http.MethodPost, url+"/execute_action", runBody("seq 1 50000 | tail -1"), auth)
	require.Equal(t, http.StatusOK, code, body)
	call(t, http.MethodGet, url+"/sessions/nope", "", auth)
	call(t, http.MethodGet, url+"/sessions/also-nope", "", auth)
	code, _ = call(t, http.MethodGet, url+"/metrics", "", nil)
	assert.Equal(t, http.StatusForbidden, code, "behind the key by default")

	fams := scrape(t, url, auth)
	for _, c := range []struct {
		name   string
		labels map[string]string
		check  func(float64) bool
	}{
		{"action_server_http_requests_total", map[string]string{"route": "/sessions/:id", "code": "404"}, func(v float64) bool { return v == 2 }},
		{"action_server_http_requests_total", map[string]string{"route": "/execute_action", "code": "200"}, func(v float64) bool { return v == 1 }},
		{"action_server_http_request_duration_seconds", map[string]string{"route": "/sessions", "method": "POST"}, func(v float64) bool { return v == 1 }},
		{"action_server_sessions", nil, func(v float64) bool { return v == 2 }},
		{"action_server_commands_started_total", nil, func(v float64) bool { return v >= 1 }},
		{"action_server_commands_running", nil, func(v float64) bool { return v == 0 }},
		{"action_server_output_bytes_total", nil, func(v float64) bool { return v > 0 }},
		{"action_server_child_processes", nil, func(v float64) bool { return v >= 2 }},
		{"action_server_ready", nil, func(v float64) bool { return v == 1 }},
		{"action_server_claimed", nil, func(v float64) bool { return v == 1 }},
		{"process_resident_memory_bytes", nil, func(v float64) bool { return v > 0 }},
	} {
		v, ok := value(fams[c.name], c.labels)
		if assert.True(t, ok, "%s%v is reported", c.name, c.labels) {
			assert.True(t, c.check(v), "%s%v = %v", c.name, c.labels, v)
		}
	}
	for _, m := range fams["action_server_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			assert.NotContains(t, l.GetValue(), "nope", "raw paths never become labels")
		}
	}
}

func TestMetrics_OpenByOptionAndOwnRegistryPerServer(t *testing.T) {
	_, a, _ := fleetServer(t, Options{APIKey: "k", OpenMetrics: true}, false)
	_, b, _ := fleetServer(t, Options{APIKey: "k", OpenMetrics: true}, false)
	for range 3 {
		call(t, http.MethodGet, a+"/livez", "", nil)
	}
	va, _ := value(scrape(t, a, nil)["action_server_http_requests_total"], map[string]string{"route": "/livez"})
	vb, _ := value(scrape(t, b, nil)["action_server_http_requests_total"], map[string]string{"route": "/livez"})
	assert.Equal(t, 3.0, va)
	assert.Zero(t, vb, "another server's counters are its own")
}

// With both a key and an init token the server starts claimed, and a claim
// rotates the key it started with (a resumed sandbox gets a new one).
func TestClaim_RotatesTheKeyItStartedWith(t *testing.T) {
	_, url, _ := fleetServer(t, Options{APIKey: "start-key", InitToken: "tok"}, true)
	code, _ := call(t, http.MethodGet, url+"/sessions", "", map[string]string{api.HeaderAPIKey: "start-key"})
	require.Equal(t, http.StatusOK, code, "claimed from the start")
	code, body := call(t, http.MethodPost, url+"/claim", `{"api_key": "resumed-key"}`, map[string]string{"Authorization": "Bearer tok"})
	require.Equal(t, http.StatusOK, code, body)
	assert.JSONEq(t, `{"rotated": true}`, body)
	code, _ = call(t, http.MethodGet, url+"/sessions", "", map[string]string{api.HeaderAPIKey: "start-key"})
	assert.Equal(t, http.StatusForbidden, code)
	code, _ = call(t, http.MethodGet, url+"/sessions", "", map[string]string{api.HeaderAPIKey: "resumed-key"})
	assert.Equal(t, http.StatusOK, code)
}
