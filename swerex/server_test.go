package swerex

import (
	"archive/zip"
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuth_RefusesAsUpstreamOnEveryRoute(t *testing.T) {
	ts := newTestServer(t, nil)
	routes := []struct{ method, path string }{
		{http.MethodGet, "/"}, {http.MethodGet, "/is_alive"}, {http.MethodPost, "/create_session"},
		{http.MethodPost, "/run_in_session"}, {http.MethodPost, "/execute"}, {http.MethodPost, "/read_file"},
		{http.MethodPost, "/write_file"}, {http.MethodPost, "/upload"}, {http.MethodPost, "/close_session"},
		{http.MethodPost, "/close"}, {http.MethodGet, "/no_such_route"},
	}
	keys := []struct {
		name, key, want string
	}{
		{"no key", "", "Not authenticated"},
		{"wrong key", "wrong", "Invalid API Key"},
	}
	for _, rt := range routes {
		for _, k := range keys {
			t.Run(rt.path+" "+k.name, func(t *testing.T) {
				r := ts.do(rt.method, rt.path, []byte("{}"), map[string]string{"X-API-Key": k.key})
				assert.Equal(t, http.StatusUnauthorized, r.status)
				assert.Equal(t, k.want, r.body["detail"])
			})
		}
	}
	r := ts.do(http.MethodGet, "/is_alive", nil, nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, map[string]any{"is_alive": true, "message": ""}, r.body)
	r = ts.do(http.MethodGet, "/", nil, nil)
	assert.Equal(t, map[string]any{"message": "hello world"}, r.body)
}

func TestSessions_RunInParallelAndIsAliveNeverWaits(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.session("slow")
	ts.session("fast")
	release := filepath.Join(ts.dir, "release")
	var wg sync.WaitGroup
	wg.Add(1)
	var slow reply
	go func() {
		defer wg.Done()
		// Runs until the test lets it end.
		slow = ts.run("slow", map[string]any{"command": "while [ ! -e " + release + " ]; do sleep 0.05; done; echo released"})
	}()
	r := ts.run("fast", map[string]any{"command": "echo fast"})
	assert.Equal(t, "fast\n", r.body["output"], "another session is not held up")
	assert.Equal(t, http.StatusOK, ts.do(http.MethodGet, "/is_alive", nil, nil).status)
	r = ts.post("/execute", map[string]any{"command": "echo x", "shell": true})
	assert.Equal(t, "x\n", r.body["stdout"], "nor is /execute")
	require.NoError(t, os.WriteFile(release, nil, 0o644))
	wg.Wait()
	assert.Equal(t, "released\n", slow.body["output"])
}

func TestBadInput_ClearErrorsAndTheServerGoesOn(t *testing.T) {
	ts := newTestServer(t, func(o *Options) { o.MaxBodyBytes = 1 << 20 })
	ts.session("other")
	huge := `{"action_type":"bash","session":"other","command":"` + strings.Repeat("x", 2<<20) + `"}`
	cases := []struct {
		name       string
		path, body string
		wantStatus int
		wantClass  string
	}{
		{"malformed JSON", "/run_in_session", `{"action_type": "bash", "command": `, http.StatusUnprocessableEntity, ""},
		{"not an object", "/run_in_session", `[1, 2]`, http.StatusUnprocessableEntity, ""},
		{"empty body", "/execute", ``, http.StatusUnprocessableEntity, ""},
		{"unknown action_type", "/run_in_session", `{"action_type": "nope", "command": "x"}`, http.StatusUnprocessableEntity, ""},
		{"bad check", "/run_in_session", `{"command": "x", "session": "other", "check": "maybe"}`, http.StatusUnprocessableEntity, ""},
		{"missing command", "/run_in_session", `{"action_type": "bash", "session": "other"}`, http.StatusUnprocessableEntity, ""},
		{"wrong type", "/run_in_session", `{"command": 5, "session": "other"}`, http.StatusUnprocessableEntity, ""},
		{"missing session", "/run_in_session", `{"command": "true", "session": "ghost"}`, statusException, classNoSession},
		{"interrupt a missing session", "/run_in_session", `{"action_type": "bash_interrupt", "session": "ghost"}`, statusException, classNoSession},
		{"huge command", "/run_in_session", huge, http.StatusRequestEntityTooLarge, ""},
		{"bad session type", "/create_session", `{"session": "x", "session_type": "zsh"}`, http.StatusUnprocessableEntity, ""},
		{"execute nothing", "/execute", `{"command": []}`, http.StatusUnprocessableEntity, ""},
		{"execute a non-string", "/execute", `{"command": ["ls", 1]}`, http.StatusUnprocessableEntity, ""},
		{"read a NUL path", "/read_file", `{"path": "/tmp/a\u0000b"}`, statusException, classValueError},
		{"read a path that is nowhere", "/read_file", `{"path": "/../../nonexistent/../x/y"}`, statusException, classFileNotFound},
		{"read a directory", "/read_file", `{"path": "/"}`, statusException, classIsADirectory},
		{"read an endless device", "/read_file", `{"path": "/dev/zero"}`, statusException, classOSError},
		{"write under a file", "/write_file", `{"path": "/dev/null/x", "content": ""}`, statusException, classNotADirectory},
		{"unknown encoding", "/read_file", `{"path": "/etc/hostname", "encoding": "klingon"}`, statusException, classLookupError},
		{"execute in a missing directory", "/execute", `{"command": ["ls"], "cwd": "/nonexistent"}`, statusException, classFileNotFound},
		{"execute a missing program", "/execute", `{"command": ["/nonexistent/prog"]}`, statusException, classFileNotFound},
		{"wrong method", "/execute", ``, http.StatusMethodNotAllowed, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := http.MethodPost
			if tc.wantStatus == http.StatusMethodNotAllowed {
				method = http.MethodGet
			}
			r := ts.do(method, tc.path, []byte(tc.body), nil)
			require.Equal(t, tc.wantStatus, r.status, "%v", r.body)
			if tc.wantClass != "" {
				class, msg, _ := r.exception()
				assert.Equal(t, tc.wantClass, class)
				assert.NotEmpty(t, msg)
			} else {
				assert.NotEmpty(t, r.body["detail"], "a clear error")
			}
			// The other session still serves.
			r = ts.run("other", map[string]any{"command": "echo still"})
			assert.Equal(t, "still\n", r.body["output"])
		})
	}
}

func TestExecute_AsSubprocessRun(t *testing.T) {
	ts := newTestServer(t, nil)
	sub := filepath.Join(ts.dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	cases := []struct {
		name      string
		req       map[string]any
		wantOut   string
		wantErr   string
		wantCode  float64
		wantClass string
		wantInMsg string
	}{
		{"shell", map[string]any{"command": "echo out; echo err >&2; exit 3", "shell": true}, "out\n", "err\n", 3, "", ""},
		{"argv", map[string]any{"command": []string{"printf", "%s|", "a b", "c"}}, "a b|c|", "", 0, "", ""},
		{"merged streams", map[string]any{"command": "echo 1; echo 2 >&2; echo 3", "shell": true, "merge_output_streams": true}, "1\n2\n3\n", "", 0, "", ""},
		{"cwd", map[string]any{"command": "pwd", "shell": true, "cwd": sub}, sub + "\n", "", 0, "", ""},
		{"env replaces the environment", map[string]any{"command": []string{"/usr/bin/env"}, "env": map[string]string{"ONLY": "this"}}, "ONLY=this\n", "", 0, "", ""},
		{"stdin is empty", map[string]any{"command": "cat; echo done", "shell": true}, "done\n", "", 0, "", ""},
		{"undecodable bytes", map[string]any{"command": `printf '\377ok\303'`, "shell": true}, `\xffok\xc3`, "", 0, "", ""},
		{"killed by a signal", map[string]any{"command": "kill -9 $$", "shell": true}, "", "", -9, "", ""},
		{"check", map[string]any{"command": "echo o; exit 2", "shell": true, "check": true, "error_msg": "boom"}, "", "", 0, classNonZeroExit,
			"boom: Command 'echo o; exit 2' failed with exit code 2. Stdout:\n'o\\n'\nStderr:\n''"},
		{"timeout", map[string]any{"command": "echo partial; sleep 300", "shell": true, "timeout": 0.5}, "", "", 0, classCommandTimeout,
			"Timeout (0.5s) exceeded while running command"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.post("/execute", tc.req)
			if tc.wantClass != "" {
				require.Equal(t, statusException, r.status, "%v", r.body)
				class, msg, extra := r.exception()
				assert.Equal(t, tc.wantClass, class)
				assert.Equal(t, tc.wantInMsg, msg)
				if tc.wantClass == classCommandTimeout {
					assert.Equal(t, "partial\n", extra["stdout"], "the partial output is kept")
				}
				return
			}
			require.Equal(t, http.StatusOK, r.status, "%v", r.body)
			assert.Equal(t, tc.wantOut, r.body["stdout"])
			assert.Equal(t, tc.wantErr, r.body["stderr"])
			assert.Equal(t, tc.wantCode, r.body["exit_code"])
		})
	}
}

func TestFiles_WriteReadAndUpload(t *testing.T) {
	ts := newTestServer(t, nil)
	path := filepath.Join(ts.dir, "a", "b", "c.txt")
	r := ts.post("/write_file", map[string]any{"path": path, "content": "line1\r\nline2\n"})
	require.Equal(t, http.StatusOK, r.status, "%v", r.body)
	r = ts.post("/read_file", map[string]any{"path": path})
	require.Equal(t, http.StatusOK, r.status, "%v", r.body)
	assert.Equal(t, "line1\nline2\n", r.body["content"], "universal newlines, as read_text")

	require.NoError(t, os.WriteFile(path, []byte("ok\xff"), 0o644))
	r = ts.post("/read_file", map[string]any{"path": path})
	class, msg, _ := r.exception()
	assert.Equal(t, classUnicodeDecode, class)
	assert.Contains(t, msg, "can't decode byte 0xff in position 2")
	r = ts.post("/read_file", map[string]any{"path": path, "errors": "backslashreplace"})
	assert.Equal(t, `ok\xff`, r.body["content"])

	// A single file, then a zipped directory, as the client sends them.
	target := filepath.Join(ts.dir, "up", "deep", "file.bin")
	r = ts.upload(t, target, "file.bin", []byte("payload"), false)
	require.Equal(t, http.StatusOK, r.status, "%v", r.body)
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "payload", string(got))

	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for name, body := range map[string]string{"top.txt": "t", "dir/inner.txt": "i"} {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, _ = w.Write([]byte(body))
	}
	require.NoError(t, zw.Close())
	dest := filepath.Join(ts.dir, "tree")
	r = ts.upload(t, dest, "zipped_transfer.zip", zbuf.Bytes(), true)
	require.Equal(t, http.StatusOK, r.status, "%v", r.body)
	got, err = os.ReadFile(filepath.Join(dest, "dir", "inner.txt"))
	require.NoError(t, err)
	assert.Equal(t, "i", string(got))
}

func (ts *testServer) upload(t *testing.T, target, name string, data []byte, unzip bool) reply {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", name)
	require.NoError(t, err)
	_, _ = fw.Write(data)
	require.NoError(t, mw.WriteField("target_path", target))
	require.NoError(t, mw.WriteField("unzip", map[bool]string{true: "true", false: "false"}[unzip]))
	require.NoError(t, mw.Close())
	return ts.do(http.MethodPost, "/upload", body.Bytes(), map[string]string{"Content-Type": mw.FormDataContentType()})
}

func TestReplay_OnlyTheLastRequestID(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.session("s")
	count := func(id string) string {
		b := []byte(`{"command": "echo x >> n; wc -l < n", "session": "s"}`)
		r := ts.do(http.MethodPost, "/run_in_session", b, map[string]string{"X-Request-ID": id})
		require.Equal(t, http.StatusOK, r.status, "%v", r.body)
		return strings.TrimSpace(r.body["output"].(string))
	}
	assert.Equal(t, "1", count("a"))
	assert.Equal(t, "1", count("a"), "a retry is answered from the last reply, not run again")
	assert.Equal(t, "2", count("b"))
	assert.Equal(t, "3", count("a"), "only the last id is kept")
	assert.Equal(t, "4", count(""), "no id, no replay")
}

func TestClose_EndsEverySession(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.session("a")
	ts.session("b")
	r := ts.post("/close", nil)
	require.Equal(t, http.StatusOK, r.status)
	class, _, _ := ts.run("a", map[string]any{"command": "true"}).exception()
	assert.Equal(t, classNoSession, class)
	ts.session("a") // the server itself goes on
}

func TestUpload_RefusesAnArchiveThatLeavesItsTarget(t *testing.T) {
	ts := newTestServer(t, nil)
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, err := zw.Create("../escaped.txt")
	require.NoError(t, err)
	_, _ = w.Write([]byte("x"))
	require.NoError(t, zw.Close())
	dest := filepath.Join(ts.dir, "inner", "target")
	r := ts.upload(t, dest, "zipped_transfer.zip", zbuf.Bytes(), true)
	require.Equal(t, statusException, r.status, "%v", r.body)
	class, _, _ := r.exception()
	assert.Equal(t, classOSError, class)
	assert.NoFileExists(t, filepath.Join(ts.dir, "inner", "escaped.txt"))

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "f")
	require.NoError(t, err)
	_, _ = fw.Write([]byte("x"))
	require.NoError(t, mw.Close())
	r = ts.do(http.MethodPost, "/upload", body.Bytes(), map[string]string{"Content-Type": mw.FormDataContentType()})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status, "no target_path: %v", r.body)
	r = ts.do(http.MethodPost, "/upload", []byte("{}"), nil)
	assert.Equal(t, http.StatusUnprocessableEntity, r.status, "not a form: %v", r.body)
}

// TestBadInput_WrongTypesAreSaidInJSONTerms: a value of the wrong JSON
// type is reported as pydantic reports it, never with the Go type the
// server decodes into.
func TestBadInput_WrongTypesAreSaidInJSONTerms(t *testing.T) {
	ts := newTestServer(t, nil)
	cases := []struct {
		name, path, body string
		want             map[string]any
	}{
		{"a number for a string", "/run_in_session", `{"command": 5, "session": "default"}`,
			map[string]any{"type": "string_type", "loc": []any{"body", "command"}, "msg": "Input should be a valid string"}},
		{"a string for a number", "/run_in_session", `{"command": "true", "timeout": "soon"}`,
			map[string]any{"type": "float_type", "loc": []any{"body", "timeout"}, "msg": "Input should be a valid number"}},
		{"a string for a list", "/run_in_session", `{"command": "true", "expect": "x"}`,
			map[string]any{"type": "list_type", "loc": []any{"body", "expect"}, "msg": "Input should be a valid list"}},
		{"a fraction for an integer", "/run_in_session", `{"action_type": "bash_interrupt", "n_retry": 1.5}`,
			map[string]any{"type": "int_type", "loc": []any{"body", "n_retry"}, "msg": "Input should be a valid integer"}},
		{"a number in a list of strings", "/execute", `{"command": ["ls", 1]}`,
			map[string]any{"type": "string_type", "loc": []any{"body", "command"}, "msg": "Input should be a valid string or a non-empty list of strings"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do(http.MethodPost, tc.path, []byte(tc.body), nil)
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "%v", r.body)
			detail, ok := r.body["detail"].([]any)
			require.True(t, ok, "%v", r.body)
			require.Len(t, detail, 1)
			assert.Equal(t, tc.want, detail[0])
			assert.NotContains(t, fmt.Sprint(r.body), "Go ")
		})
	}
}
