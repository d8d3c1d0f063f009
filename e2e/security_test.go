package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
)

// TestAPIKey_EveryRouteInTheSpecRefusesWithoutIt walks the server's own
// OpenAPI description, so a route added later is covered without editing
// this test.
func TestAPIKey_EveryRouteInTheSpecRefusesWithoutIt(t *testing.T) {
	const key = "walk-every-route-key"
	s := startServer(t, startOpts{apiKey: key})
	req, err := http.NewRequest(http.MethodGet, s.URL+"/openapi.json", nil)
	require.NoError(t, err)
	req.Header.Set(api.HeaderAPIKey, key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&spec))
	resp.Body.Close()
	require.NotEmpty(t, spec.Paths)

	open := map[string]bool{"/alive": true, "/server_info": true, "/livez": true, "/readyz": true}
	walked := 0
	for path, ops := range spec.Paths {
		concrete := strings.NewReplacer("{id}", "default", "{cid}", "1").Replace(path)
		for method := range ops {
			if method == "parameters" {
				continue
			}
			for _, header := range []string{"", "wrong-" + key} {
				req, err := http.NewRequest(strings.ToUpper(method), s.URL+concrete, strings.NewReader("{}"))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				if header != "" {
					req.Header.Set(api.HeaderAPIKey, header)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err, "%s %s", method, path)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if open[path] {
					assert.NotEqual(t, http.StatusForbidden, resp.StatusCode, "%s %s is open", method, path)
					continue
				}
				assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s %s with key %q", method, path, header)
				if method != "head" { // an answer to HEAD has no body
					assert.JSONEq(t, refusal(path, "Invalid API Key", api.CodeUnauthorized), string(body), "%s %s", method, path)
				}
				walked++
			}
		}
	}
	assert.Greater(t, walked, 30, "the spec lists the routes")
}

// TestAPIKey_NeverLeaks checks that the key reaches neither the agent's
// shell nor the logs.
func TestAPIKey_NeverLeaks(t *testing.T) {
	const key = "never-leak-this-key-4711"
	s := startServer(t, startOpts{apiKey: key, args: []string{"--working-dir", t.TempDir(), "--no-enable-browser"}})
	c := client.New(s.URL, client.WithAPIKey(key))
	obs, err := c.Run(ctxT(t), "env; cat /proc/$$/environ | tr '\\0' '\\n'", client.RunOptions{})
	require.NoError(t, err)
	assert.NotContains(t, obs.Content, key)
	assert.NotContains(t, obs.Content, "SESSION_API_KEY")
	// Refused requests are logged without their headers.
	bad := client.New(s.URL, client.WithAPIKey("wrong-"+key))
	_, err = bad.Run(ctxT(t), "true", client.RunOptions{})
	require.Error(t, err)
	s.stop()
	assert.NotContains(t, s.logs.String(), key)
}

// repeatByte is an endless stream of one byte, so a huge request body
// costs no memory in the test.
type repeatByte byte

func (r repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestBodyLimit_ActionsAreBoundedUploadsAreNot sends an action just over
// the body limit, which the server refuses before reading it all into
// memory, and then uploads more than that, which streams.
func TestBodyLimit_ActionsAreBoundedUploadsAreNot(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	const limit = 64 << 20 // the binary's request body limit (server.Options.MaxBodyBytes)

	for _, tc := range []struct {
		name   string
		size   int64 // bytes of file content
		status int
	}{
		{"just under the limit", limit - 1<<10, http.StatusOK},
		{"just over the limit", limit + 1, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A valid action: write tc.size bytes to a file.
			dest := filepath.Join(s.WorkDir, "written.txt")
			body := io.MultiReader(strings.NewReader(`{"action": {"action": "write", "args": {"path": "`+dest+`", "content": "`),
				io.LimitReader(repeatByte('x'), tc.size), strings.NewReader(`"}}}`))
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/execute_action", body)
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			if tc.status != http.StatusRequestEntityTooLarge {
				fi, err := os.Stat(dest)
				require.NoError(t, err)
				assert.GreaterOrEqual(t, fi.Size(), tc.size, "the whole content arrived")
				return
			}
			var got struct {
				Detail string `json:"detail"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
			assert.Equal(t, fmt.Sprintf("Request body exceeds %d bytes", limit), got.Detail)
		})
	}

	// The server goes on, and an upload larger than the limit streams.
	obs, err := s.Client.Run(ctx, "echo after", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "after", obs.Content)
	const uploadSize = limit + 1<<20
	require.NoError(t, s.Client.UploadReader(ctx, "big.bin", io.LimitReader(repeatByte('u'), uploadSize), s.WorkDir, false))
	fi, err := os.Stat(filepath.Join(s.WorkDir, "big.bin"))
	require.NoError(t, err)
	assert.EqualValues(t, uploadSize, fi.Size())
}

// hostileRequest sends what a web page could make a browser send: a body
// of its choosing, and a Host and Origin that are not the server's. It
// returns the status, the headers and the body of the answer.
type hostileRequest struct {
	method, path, host, origin, contentType, key, body string
	websocket                                          bool
}

func (h hostileRequest) send(t *testing.T, s *server) (int, http.Header, string) {
	t.Helper()
	method := h.method
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader
	if h.body != "" {
		body = strings.NewReader(h.body)
	}
	req, err := http.NewRequest(method, s.URL+h.path, body)
	require.NoError(t, err)
	if h.host != "" {
		req.Host = h.host
	}
	for k, v := range map[string]string{"Origin": h.origin, "Content-Type": h.contentType, api.HeaderAPIKey: h.key} {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	if h.websocket {
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return resp.StatusCode, resp.Header, ""
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// runMarker is an action that creates a file, so that a test sees whether
// a refused request ran anyway.
func runMarker(t *testing.T, dir string) (string, string) {
	marker := filepath.Join(dir, "ran-"+strings.ReplaceAll(t.Name(), "/", "_"))
	return marker, `{"action": {"action": "run", "args": {"command": "touch ` + marker + `"}}}`
}

// TestCrossSite_KeylessServerRefusesWhatAPageCanSend is issue 30's
// reproduction: without a key, a page posting text/plain (no CORS
// preflight), a rebinding page (its own name as Host) and a page of
// another origin ran commands and opened terminals.
func TestCrossSite_KeylessServerRefusesWhatAPageCanSend(t *testing.T) {
	s := startServer(t, startOpts{})
	port := strings.TrimPrefix(s.URL, "http://127.0.0.1:")
	for _, tc := range []struct {
		name   string
		req    hostileRequest
		status int
		detail string
	}{
		{"a simple cross-site POST (text/plain)", hostileRequest{path: "/execute_action", contentType: "text/plain;charset=UTF-8"},
			http.StatusUnsupportedMediaType, `Content-Type must be application/json, not \"text/plain;charset=UTF-8\"`},
		{"a form POST", hostileRequest{path: "/execute_action", contentType: "application/x-www-form-urlencoded"},
			http.StatusUnsupportedMediaType, "Content-Type must be application/json"},
		{"a rebinding page", hostileRequest{path: "/execute_action", host: "rebind.attacker.example:" + port, contentType: "application/json"},
			http.StatusForbidden, `Host \"rebind.attacker.example:` + port + `\" is refused`},
		{"a rebinding page's websocket", hostileRequest{method: "GET", path: "/sessions/default/attach", host: "rebind.attacker.example:" + port,
			origin: "http://rebind.attacker.example:" + port, websocket: true}, http.StatusForbidden, "is refused"},
		{"another origin", hostileRequest{path: "/execute_action", origin: "http://attacker.example", contentType: "application/json"},
			http.StatusForbidden, `Cross-origin request refused: Origin \"http://attacker.example\"`},
		{"a sandboxed page (Origin: null)", hostileRequest{path: "/execute_action", origin: "null", contentType: "application/json"},
			http.StatusForbidden, "Cross-origin request refused"},
		{"another origin's websocket", hostileRequest{method: "GET", path: "/sessions/default/attach", origin: "http://attacker.example",
			websocket: true}, http.StatusForbidden, "Cross-origin request refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker, action := runMarker(t, s.WorkDir)
			if !tc.req.websocket {
				tc.req.body = action
			}
			status, _, body := tc.req.send(t, s)
			assert.Equal(t, tc.status, status)
			assert.Contains(t, body, tc.detail)
			_, err := os.Stat(marker)
			assert.ErrorIs(t, err, os.ErrNotExist, "the command did not run")
		})
	}

	// What the server's own clients send still works: JSON, addressed to
	// localhost or the address, and the terminal's websocket.
	for _, tc := range []hostileRequest{
		{path: "/execute_action", contentType: "application/json"},
		{path: "/execute_action", contentType: "application/json", host: "localhost:" + port, origin: "http://localhost:" + port},
	} {
		marker, action := runMarker(t, s.WorkDir)
		tc.body = action
		status, _, body := tc.send(t, s)
		require.Equal(t, http.StatusOK, status, body)
		assert.FileExists(t, marker)
		os.Remove(marker)
	}
	status, _, _ := hostileRequest{method: "GET", path: "/sessions/default/attach", origin: s.URL, websocket: true}.send(t, s)
	assert.Equal(t, http.StatusSwitchingProtocols, status)
}

// TestCrossSite_KeyedServer: with a key any Host is answered (clusters use
// service names), a foreign Origin is still refused, and --allow-origin
// lets one in.
func TestCrossSite_KeyedServer(t *testing.T) {
	const key = "cross-site-key"
	s := startServer(t, startOpts{apiKey: key, args: []string{"--working-dir", t.TempDir(), "--no-enable-browser",
		"--allow-origin", "https://ui.example"}})
	for _, tc := range []struct {
		name   string
		req    hostileRequest
		status int
	}{
		{"a service name", hostileRequest{host: "runtime.ns.example:8000", key: key}, http.StatusOK},
		{"a service name without the key", hostileRequest{host: "runtime.ns.example:8000"}, http.StatusForbidden},
		{"another origin with the key", hostileRequest{origin: "http://attacker.example", key: key}, http.StatusForbidden},
		{"the allowed origin", hostileRequest{origin: "https://ui.example", key: key}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker, action := runMarker(t, s.WorkDir)
			tc.req.path, tc.req.body, tc.req.contentType = "/execute_action", action, "application/json"
			status, _, body := tc.req.send(t, s)
			assert.Equal(t, tc.status, status, body)
			_, err := os.Stat(marker)
			assert.Equal(t, tc.status == http.StatusOK, err == nil, "the command ran only if answered")
		})
	}
}

// TestAPIKey_RefusedRequestsLearnNoRoutes: a 405's Allow header lists the
// methods a path takes; a request without the key must not see it.
func TestAPIKey_RefusedRequestsLearnNoRoutes(t *testing.T) {
	const key = "allow-header-key"
	s := startServer(t, startOpts{apiKey: key})
	for _, path := range []string{"/sessions/default", "/execute_action", "/mcp/sse"} {
		status, header, body := hostileRequest{method: http.MethodPut, path: path}.send(t, s)
		assert.Equal(t, http.StatusForbidden, status, path)
		assert.JSONEq(t, refusal(path, "Invalid API Key", api.CodeUnauthorized), body, path)
		assert.Empty(t, header.Values("Allow"), "%s: no route is revealed", path)
	}
	status, header, _ := hostileRequest{method: http.MethodPut, path: "/sessions/default", key: key}.send(t, s)
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	assert.NotEmpty(t, header.Get("Allow"), "with the key the 405 is complete")
}

// TestAPIKey_NotInTheServersEnvironment: /proc/PID/environ shows a
// process's first environment for its whole life, to its user and root.
// Neither the key nor the key file's content may be there, and the key
// file is gone once read.
func TestAPIKey_NotInTheServersEnvironment(t *testing.T) {
	const key = "environ-key-0xfeed"
	keyFile := filepath.Join(t.TempDir(), "key")
	for _, tc := range []struct {
		name string
		o    startOpts
	}{
		{"SESSION_API_KEY", startOpts{apiKey: key}},
		{"SESSION_API_KEY_FILE", startOpts{env: []string{"SESSION_API_KEY_FILE=" + keyFile}}},
		{"--api-key-file", startOpts{args: []string{"--working-dir", t.TempDir(), "--no-enable-browser", "--api-key-file", keyFile}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(keyFile, []byte(key+"\n"), 0o600))
			if tc.o.apiKey != "" {
				os.Remove(keyFile)
			}
			s := startServer(t, startOpts{noWait: true, env: tc.o.env, args: tc.o.args, apiKey: tc.o.apiKey})
			s.Client = client.New(s.URL, client.WithAPIKey(key))
			require.NoError(t, s.Client.WaitUntilAlive(ctxT(t)), s.logs.String())

			environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", s.cmd.Process.Pid))
			require.NoError(t, err)
			require.NotEmpty(t, environ)
			assert.NotContains(t, string(environ), key)
			assert.NotContains(t, string(environ), "SESSION_API_KEY=")
			// Re-executed to drop the key, it keeps its name: ps and a
			// container engine show the process by it.
			comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", s.cmd.Process.Pid))
			require.NoError(t, err)
			assert.Equal(t, "action-server", strings.TrimSpace(string(comm)))
			_, err = os.Stat(keyFile)
			assert.ErrorIs(t, err, os.ErrNotExist, "the key file is removed once read")

			// The key is the one given.
			_, err = client.New(s.URL).ListFiles(ctxT(t), "")
			assert.ErrorIs(t, err, client.ErrUnauthorized, "without the key")
			_, err = s.Client.ListFiles(ctxT(t), "")
			assert.NoError(t, err)
		})
	}
}

// TestAPIKey_GeneratedOnRequest: --generate-key (make run) prints a key
// once and enforces it; without the flag and without SESSION_API_KEY the
// server has no key, as the hosts expect.
func TestAPIKey_GeneratedOnRequest(t *testing.T) {
	s := startServer(t, startOpts{noWait: true, args: []string{"--working-dir", t.TempDir(), "--no-enable-browser", "--generate-key"}})
	var key string
	require.Eventually(t, func() bool {
		m := regexp.MustCompile(`export SESSION_API_KEY=([0-9a-f]+)\n`).FindAllStringSubmatch(s.logs.String(), -1)
		if len(m) == 1 {
			key = m[0][1]
		}
		return key != ""
	}, 30*time.Second, 20*time.Millisecond)
	assert.Len(t, key, 48)
	require.NoError(t, client.New(s.URL, client.WithAPIKey(key)).WaitUntilAlive(ctxT(t)))
	_, err := client.New(s.URL).ListFiles(ctxT(t), "")
	assert.ErrorIs(t, err, client.ErrUnauthorized, "without the key")
	_, err = client.New(s.URL, client.WithAPIKey(key)).ListFiles(ctxT(t), "")
	assert.NoError(t, err)
	assert.Equal(t, 1, strings.Count(s.logs.String(), key), "printed once, and never logged")

	plain := startServer(t, startOpts{})
	_, err = plain.Client.ListFiles(ctxT(t), "")
	assert.NoError(t, err, "no key unless asked for")
}

// TestErrors_ClientMistakesInJSON: a value of the wrong type is the
// client's mistake (4xx, said in JSON's terms), except in /execute_action,
// whose 500 the host's error handling expects, as upstream answers it.
func TestErrors_ClientMistakesInJSON(t *testing.T) {
	s := startServer(t, startOpts{})
	for _, tc := range []struct {
		path, body string
		status     int
		detail     string
	}{
		{"/list_files", `{"path": 5}`, http.StatusBadRequest, `field \"path\" must be a string, not number`},
		{"/list_files", `["a"]`, http.StatusBadRequest, `expected an object, not array`},
		{"/update_mcp_server", `[{"name": 5, "command": "x"}]`, http.StatusBadRequest, `MCP server 0: not an object with string fields: field \"name\" must be a string, not number`},
		{"/update_mcp_server", `[{"name": "a", "command": "x", "env": [1]}]`, http.StatusBadRequest, `MCP server 0: env must map strings to strings`},
		{"/sessions", `{"id": 7}`, http.StatusUnprocessableEntity, `field \"id\" must be a string, not number`},
		{"/sessions", `{"id": "."}`, http.StatusBadRequest, `not '.' or '..'`},
		{"/sessions", `{"id": ".."}`, http.StatusBadRequest, `not '.' or '..'`},
		{"/sessions/default/resize", `{"rows": "24"}`, http.StatusUnprocessableEntity, `field \"rows\" must be an integer from 0 to 65535, not string`},
		{"/execute_action", `{"action": {"action": "run", "args": {"command": 5}}}`, http.StatusInternalServerError,
			`Internal server error: decode run action args: field \"command\" must be a string, not number`},
		{"/execute_action", `{"action": {"action": "read", "args": {"path": "/x", "view_range": "1"}}}`, http.StatusInternalServerError,
			`field \"view_range\" must be a list, not string`},
	} {
		t.Run(tc.path+" "+tc.body, func(t *testing.T) {
			status, _, body := hostileRequest{path: tc.path, body: tc.body, contentType: "application/json"}.send(t, s)
			assert.Equal(t, tc.status, status, body)
			assert.Contains(t, body, tc.detail)
			assert.NotContains(t, body, "Go ")
			assert.NotContains(t, body, "json:")
		})
	}
}

// TestFileViewerURL_NeverWrittenThroughALink: a link planted where the
// viewer's address goes made a root server overwrite the file it points
// to. The server now writes only a file of its own.
func TestFileViewerURL_NeverWrittenThroughALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o600))
	urlFile := filepath.Join(dir, "oh-server-url")
	require.NoError(t, os.Symlink(victim, urlFile))

	// The viewer runs with the browser enabled (Chromium starts only on
	// a browser action).
	s := startServer(t, startOpts{env: []string{"FILE_VIEWER_URL_FILE=" + urlFile}, args: []string{"--working-dir", t.TempDir()}})
	data, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "precious\n", string(data))
	// The log reaches the test through a pipe copied by another
	// goroutine, which may still be behind the server when it is ready.
	assert.Eventually(t, func() bool { return strings.Contains(s.logs.String(), "symbolic link") },
		10*time.Second, 10*time.Millisecond, "the refusal is logged: %s", s.logs.String())

	// A file that is missing is created, and holds the address.
	require.NoError(t, os.Remove(urlFile))
	startServer(t, startOpts{env: []string{"FILE_VIEWER_URL_FILE=" + urlFile}, args: []string{"--working-dir", t.TempDir()}})
	data, err = os.ReadFile(urlFile)
	require.NoError(t, err)
	assert.Regexp(t, `^http://localhost:\d+/[0-9a-f]{32}$`, string(data), "the address, with the viewer's token")
}

// TestAPIKey_NoProcessOfAContainerShowsIt runs the server as a PID
// namespace's PID 1, as in a container: the init hands the key to the
// server it starts, and no process there, the init included, shows it in
// its environment.
func TestAPIKey_NoProcessOfAContainerShowsIt(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("a new PID namespace needs root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not installed")
	}
	const key = "pid1-key-0xbeef"
	s := startServer(t, startOpts{apiKey: key, wrap: []string{"unshare", "--pid", "--fork", "--mount-proc"}})
	// unshare ignores SIGTERM while it waits: the namespace's init gets it
	// through the process group, and ends the server.
	t.Cleanup(func() { _ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM) })
	_, err := client.New(s.URL).ListFiles(ctxT(t), "")
	assert.ErrorIs(t, err, client.ErrUnauthorized, "the key is enforced")

	// grep names each file that holds the key.
	obs, err := s.Client.Run(ctxT(t), "cat /proc/1/cmdline | tr '\\0' ' '; echo; grep -l -a -e "+key[:8]+" /proc/[0-9]*/environ 2>/dev/null; true", client.RunOptions{})
	require.NoError(t, err)
	assert.Contains(t, obs.Content, "action-server", "PID 1 is the server's init")
	assert.NotRegexp(t, `/proc/\d+/environ`, obs.Content, "no process shows the key")
}

// TestAPIKey_TheAgentOfAServerOfItsOwnUIDCannotReadIt runs the server as
// an unprivileged user that is also the sandbox user: the agent's
// commands run as the server's uid, so they may read its
// /proc/PID/environ, which held the key.
func TestAPIKey_TheAgentOfAServerOfItsOwnUIDCannotReadIt(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("running the server as another uid needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv not installed")
	}
	const uid = "65534" // nobody
	// The binary and the workspace where that uid reaches them.
	dir, err := os.MkdirTemp("", "e2e-nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "action-server")
	data, err := os.ReadFile(filepath.Join(binDir, "action-server"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.Chown(ws, 65534, 65534))

	const key = "own-uid-key-0x5eed"
	s := startServer(t, startOpts{apiKey: key, workDir: ws,
		env: []string{"USER=nobody"},
		// The shell drops the binary startServer names, which that uid
		// cannot reach, for the copy.
		wrap: []string{"setpriv", "--reuid", uid, "--regid", uid, "--clear-groups", "sh", "-c", `shift; exec "$0" "$@"`, bin},
		args: []string{"--working-dir", ws, "--no-enable-browser"}})
	// grep names each file that holds the key; those of other uids are
	// unreadable, and skipped.
	obs, err := s.Client.Run(ctxT(t), "id -u; grep -l -a -e "+key[:10]+" /proc/[0-9]*/environ 2>/dev/null; true", client.RunOptions{})
	require.NoError(t, err)
	assert.Regexp(t, `^`+uid+`(\n|$)`, obs.Content, "the agent runs as the server's uid")
	assert.NotRegexp(t, `/proc/\d+/environ`, obs.Content, "no process of the agent's uid shows the key")
}

// refusal is the body of a refused request: upstream's {"detail"} on the
// OpenHands routes, with the machine-readable code beside it on the native
// ones.
func refusal(path, detail, code string) string {
	native := path == "/sessions" || path == "/watch" || path == "/claim"
	for _, prefix := range []string{"/sessions/", "/files/"} {
		native = native || strings.HasPrefix(path, prefix)
	}
	b := api.ErrorBody{Detail: detail}
	if native {
		b.Code = code
	}
	out, err := json.Marshal(b)
	if err != nil {
		panic(err)
	}
	return string(out)
}
