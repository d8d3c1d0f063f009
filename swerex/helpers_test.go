package swerex

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/executor"
)

const testToken = "secret"

// testServer is a real server over real bash shells, on loopback.
type testServer struct {
	t   *testing.T
	url string
	dir string
}

func newTestServer(t *testing.T, mod func(*Options)) *testServer {
	t.Helper()
	dir := t.TempDir()
	e, err := executor.New(context.Background(), executor.Options{
		WorkDir: dir,
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir},
	})
	require.NoError(t, err)
	opts := Options{Token: testToken}
	if mod != nil {
		mod(&opts)
	}
	s := New(e, opts)
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s.Close(ctx)
		e.Close(ctx)
	})
	return &testServer{t: t, url: hs.URL, dir: dir}
}

// reply is a decoded answer.
type reply struct {
	status int
	body   map[string]any
}

// exception returns the transferred exception's class and message.
func (r reply) exception() (class, message string, extra map[string]any) {
	exc, _ := r.body["swerexception"].(map[string]any)
	if exc == nil {
		return "", "", nil
	}
	class, _ = exc["class_path"].(string)
	message, _ = exc["message"].(string)
	extra, _ = exc["extra_info"].(map[string]any)
	return class, message, extra
}

func (ts *testServer) do(method, path string, body []byte, header map[string]string) reply {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.url+path, bytes.NewReader(body))
	require.NoError(ts.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", testToken)
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(ts.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(ts.t, err)
	r := reply{status: resp.StatusCode}
	if len(data) > 0 {
		require.NoError(ts.t, json.Unmarshal(data, &r.body), "body: %s", data)
	}
	return r
}

// post sends v as JSON.
func (ts *testServer) post(path string, v any) reply {
	ts.t.Helper()
	b, err := json.Marshal(v)
	require.NoError(ts.t, err)
	return ts.do(http.MethodPost, path, b, nil)
}

// session creates a session.
func (ts *testServer) session(name string) {
	ts.t.Helper()
	r := ts.post("/create_session", map[string]any{"session": name})
	require.Equal(ts.t, http.StatusOK, r.status, "create %s: %v", name, r.body)
}

// run runs a bash action in a session.
func (ts *testServer) run(session string, a map[string]any) reply {
	ts.t.Helper()
	a["session"] = session
	if a["action_type"] == nil {
		a["action_type"] = "bash"
	}
	return ts.post("/run_in_session", a)
}
