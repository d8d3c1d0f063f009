package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
)

// get returns the status and body of a GET, or 0 when the connection is
// refused.
func get(url string, headers map[string]string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The order an orchestrator relies on: readiness turns 503 while the port
// still answers and a request accepted before SIGTERM is still running;
// that request gets its answer; the server exits within five seconds.
func TestSIGTERM_ReadinessFlipsBeforeTheListenerClosesWhileAnAcceptedRequestFinishes(t *testing.T) {
	s := startServer(t, startOpts{})
	code, _ := get(s.URL+"/readyz", nil)
	require.Equal(t, http.StatusOK, code)

	// The subshell ignores the signals the shutdown sends first, so the
	// request stays in flight until the grace ends.
	type result struct {
		obs string
		err error
	}
	answered := make(chan result, 1)
	go func() {
		obs, err := s.Client.Run(context.Background(), "(trap '' TERM HUP INT; sleep 30)", client.RunOptions{Blocking: true})
		r := result{err: err}
		if obs != nil {
			r.obs = obs.Content
		}
		answered <- r
	}()
	require.Eventually(t, func() bool {
		sess, err := s.Client.GetSession(context.Background(), "default")
		return err == nil && sess.RunningCommand != nil
	}, 10*time.Second, 20*time.Millisecond, "the command runs")

	start := time.Now()
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	var flipped bool
	for !flipped && time.Since(start) < 5*time.Second {
		code, body := get(s.URL+"/readyz", nil)
		require.NotZero(t, code, "the port closed before readiness turned: %s", body)
		flipped = code == http.StatusServiceUnavailable
	}
	require.True(t, flipped, "/readyz turns 503 after SIGTERM")
	code, _ = get(s.URL+"/livez", nil)
	assert.Equal(t, http.StatusOK, code, "liveness never turns")
	select {
	case <-answered:
		t.Fatal("the accepted request ended before the readiness flip was seen")
	default:
	}

	select {
	case r := <-answered:
		assert.NoError(t, r.err, "the request accepted before SIGTERM gets its answer")
	case <-time.After(5 * time.Second):
		t.Fatal("the accepted request got no answer")
	}
	select {
	case <-s.exited:
	case <-time.After(5*time.Second - time.Since(start)):
		t.Fatal("server did not exit within 5 s of SIGTERM")
	}
	code, _ = get(s.URL+"/readyz", nil)
	assert.Zero(t, code, "the port is closed once the server exited")
}

// claim posts a claim with the init token.
func claim(t *testing.T, url, token string, req api.ClaimRequest) (int, string) {
	t.Helper()
	b, err := json.Marshal(req)
	require.NoError(t, err)
	hreq, err := http.NewRequest(http.MethodPost, url+"/claim", strings.NewReader(string(b)))
	require.NoError(t, err)
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(hreq)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestLateBinding_ClaimThenRotateAndKeysNeverLeak(t *testing.T) {
	for _, source := range []string{"file", "environment"} {
		t.Run("token from the "+source, func(t *testing.T) { lateBinding(t, source == "file") })
	}
}

func lateBinding(t *testing.T, fromFile bool) {
	const token = "init-token-7f3a"
	const key1, key2 = "claimed-key-one-91b2", "rotated-key-two-c4d8"
	tokenFile := filepath.Join(t.TempDir(), "init-token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))
	env := []string{"INIT_TOKEN_FILE=" + tokenFile, "INIT_TOKEN_FILE_REMOVE=1"}
	if !fromFile {
		env = []string{"INIT_TOKEN=" + token}
	}
	s := startServer(t, startOpts{noWait: true, env: env})
	require.Eventually(t, func() bool { code, _ := get(s.URL+"/readyz", nil); return code == http.StatusOK },
		30*time.Second, 20*time.Millisecond, "an unclaimed server is ready to be claimed")
	if fromFile {
		assert.NoFileExists(t, tokenFile, "the token file is removed once read, as asked")
	}

	code, body := get(s.URL+"/sessions", map[string]string{api.HeaderAPIKey: key1})
	assert.Equal(t, http.StatusServiceUnavailable, code, "nothing but the probes before the claim: %s", body)
	code, _ = get(s.URL+"/alive", nil)
	assert.Equal(t, http.StatusServiceUnavailable, code, "no action can run before the claim")

	work := t.TempDir()
	code, body = claim(t, s.URL, token, api.ClaimRequest{APIKey: key1, Env: map[string]string{"OWNER": "tenant-42"}, WorkingDir: work})
	require.Equal(t, http.StatusOK, code, body)
	c1 := client.New(s.URL, client.WithAPIKey(key1))
	require.NoError(t, c1.WaitUntilAlive(ctxT(t)))
	obs, err := c1.Run(ctxT(t), `echo "$OWNER"; pwd; env; tr '\0' '\n' < /proc/$$/environ`, client.RunOptions{})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(obs.Content, "tenant-42\n"+work+"\n"), obs.Content)
	for _, secret := range []string{token, key1, "INIT_TOKEN"} {
		assert.NotContains(t, obs.Content, secret, "the shell never sees it")
	}

	// A command started before the rotation is read with the new key.
	_, err = c1.CreateSession(ctxT(t), api.CreateSessionRequest{ID: "long"})
	require.NoError(t, err)
	cmd, err := c1.StartCommand(ctxT(t), "long", "sleep 1; echo survived")
	require.NoError(t, err)
	code, body = claim(t, s.URL, token, api.ClaimRequest{APIKey: key2})
	require.Equal(t, http.StatusOK, code, body)
	assert.JSONEq(t, `{"rotated": true}`, body)
	_, err = c1.ListSessions(ctxT(t))
	assert.ErrorContains(t, err, "403", "the old key is refused at once")
	c2 := client.New(s.URL, client.WithAPIKey(key2))
	out, err := c2.Output(ctxT(t), "long", cmd.ID, 0, 20*time.Second)
	require.NoError(t, err)
	for !out.Done {
		next, err := c2.Output(ctxT(t), "long", cmd.ID, out.NextOffset, 20*time.Second)
		require.NoError(t, err)
		next.Data = out.Data + next.Data
		out = next
	}
	assert.Contains(t, out.Data, "survived", "the command outlived the rotation")

	environ, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/environ")
	require.NoError(t, err)
	secrets := []string{key1, key2}
	if fromFile {
		secrets = append(secrets, token) // from the environment it is there, by the caller's choice
	}
	for _, secret := range secrets {
		assert.NotContains(t, string(environ), secret, "the server's environment")
	}
	for _, secret := range []string{token, key1, key2} {
		assert.NotContains(t, s.logs.String(), secret, "the server's log")
	}
}

func TestMetrics_ScrapedFromTheBinary(t *testing.T) {
	const key = "metrics-e2e-key"
	s := startServer(t, startOpts{apiKey: key})
	_, err := s.Client.Run(ctxT(t), "echo hi", client.RunOptions{})
	require.NoError(t, err)
	code, _ := get(s.URL+"/metrics", nil)
	assert.Equal(t, http.StatusForbidden, code, "behind the key")
	code, body := get(s.URL+"/metrics", map[string]string{api.HeaderAPIKey: key})
	require.Equal(t, http.StatusOK, code, body)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err)
	for _, name := range []string{"action_server_http_requests_total", "action_server_http_request_duration_seconds",
		"action_server_sessions", "action_server_commands_started_total", "action_server_commands_running",
		"action_server_output_bytes_total", "action_server_child_processes", "process_resident_memory_bytes"} {
		assert.Contains(t, fams, name)
	}
	var routes []string
	for _, m := range fams["action_server_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "route" {
				routes = append(routes, l.GetValue())
			}
		}
	}
	assert.Contains(t, routes, "/execute_action")
	started := fams["action_server_commands_started_total"].GetMetric()
	require.NotEmpty(t, started)
	assert.GreaterOrEqual(t, started[0].GetCounter().GetValue(), 1.0)
	children := fams["action_server_child_processes"].GetMetric()
	require.NotEmpty(t, children)
	assert.GreaterOrEqual(t, children[0].GetGauge().GetValue(), 1.0, "the default bash")
}

// rssAnon reads a process's anonymous resident memory.
func rssAnon(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no RssAnon")
	return 0
}

// Memory comes back after bulk output, and the output stays readable. The
// precise figure is in make bench; this bound is generous (before output
// moved out of the heap, 9 x 6.9 MB left about 30 MiB more).
func TestMemory_AnonymousMemoryComesBackAfterBulkOutput(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	_, err := s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: "bulk"})
	require.NoError(t, err)
	_, err = s.Client.Run(ctx, "true", client.RunOptions{})
	require.NoError(t, err)
	time.Sleep(2 * time.Second)
	idle := rssAnon(t, s.cmd.Process.Pid)

	const runs, size = 9, 6888896 // seq 1 1000000
	var ids []int64
	for range runs {
		cmd, err := s.Client.StartCommand(ctx, "bulk", "seq 1 1000000")
		require.NoError(t, err)
		got := 0
		for ev := range s.Client.Stream(ctx, "bulk", cmd.ID, client.StreamOptions{}) {
			require.NoError(t, ev.Err)
			got += len(ev.Data)
		}
		require.Equal(t, size, got)
		ids = append(ids, cmd.ID)
	}
	time.Sleep(2 * time.Second)
	after := rssAnon(t, s.cmd.Process.Pid)
	t.Logf("RssAnon idle %d KiB, 2 s after bulk output %d KiB", idle>>10, after>>10)
	assert.LessOrEqual(t, after, idle+12<<20, "anonymous memory falls back near idle")

	// Every byte is still there: the first command's last line, by offset.
	out, err := s.Client.Output(ctx, "bulk", ids[0], size-8, 0)
	require.NoError(t, err)
	assert.Zero(t, out.Lost)
	assert.Equal(t, "1000000", strings.TrimSpace(out.Data))
}
