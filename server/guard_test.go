package server

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
)

// guarded serves a Server that is not ready: a request the guard lets
// through answers 503 (or 404/405 for a route that does not exist), one
// it refuses answers 403 or 415.
func guarded(t *testing.T, opts Options) string {
	t.Helper()
	opts.IdleTrim = -1
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(New(opts).Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

type guardCase struct {
	name    string
	method  string
	path    string
	headers map[string]string
	body    string
	status  int
	detail  string // a part of the answer's body
}

func (tc guardCase) run(t *testing.T, url string) *http.Response {
	t.Helper()
	method := tc.method
	if method == "" {
		method = http.MethodPost
	}
	path := tc.path
	if path == "" {
		path = "/execute_action"
	}
	var body io.Reader
	if tc.body != "" {
		body = strings.NewReader(tc.body)
	}
	req, err := http.NewRequest(method, url+path, body)
	require.NoError(t, err)
	for k, v := range tc.headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, tc.status, resp.StatusCode, "%s: %s", tc.name, got)
	assert.Contains(t, string(got), tc.detail, tc.name)
	return resp
}

const notReady = "Server is not ready"

func TestGuard_WithoutAKeyOnlyLocalHostNamesAreAnswered(t *testing.T) {
	url := guarded(t, Options{AllowedHosts: []string{"sandbox.internal"}})
	json := map[string]string{"Content-Type": "application/json"}
	with := func(host string) map[string]string {
		return map[string]string{"Host": host, "Content-Type": "application/json"}
	}
	for _, tc := range []guardCase{
		{name: "loopback address", headers: json, body: "{}", status: 503, detail: notReady},
		{name: "localhost with port", headers: with("localhost:8000"), body: "{}", status: 503, detail: notReady},
		{name: "LOCALHOST", headers: with("LOCALHOST"), body: "{}", status: 503, detail: notReady},
		{name: "IPv6 with brackets", headers: with("[::1]:8000"), body: "{}", status: 503, detail: notReady},
		{name: "IPv6 in brackets without port", headers: with("[::1]"), body: "{}", status: 503, detail: notReady},
		{name: "IPv6 without brackets", headers: with("::1"), body: "{}", status: 503, detail: notReady},
		{name: "another address", headers: with("10.1.2.3:8000"), body: "{}", status: 503, detail: notReady},
		{name: "Docker's name of the host", headers: with("host.docker.internal:30000"), body: "{}", status: 503, detail: notReady},
		{name: "a Kubernetes service", headers: with("rt-1.ns.svc.cluster.local:30000"), body: "{}", status: 503, detail: notReady},
		{name: "a name the operator allowed", headers: with("sandbox.internal:1"), body: "{}", status: 503, detail: notReady},
		{name: "a rebinding name", headers: with("rebind.attacker.example:8000"), body: "{}", status: 403,
			detail: `Host \"rebind.attacker.example:8000\" is refused`},
		{name: "a rebinding name on the open route", method: "GET", path: "/server_info",
			headers: with("rebind.attacker.example"), status: 403, detail: "without an API key"},
		{name: "a websocket to a rebinding name", method: "GET", path: "/sessions/default/attach",
			headers: map[string]string{"Host": "rebind.attacker.example", "Connection": "Upgrade", "Upgrade": "websocket",
				"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="},
			status: 403, detail: "is refused"},
		{name: "localhost as a suffix", headers: with("localhost.attacker.example"), body: "{}", status: 403, detail: "is refused"},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, url) })
	}
}

func TestGuard_WithAKeyAnyHostIsAnswered(t *testing.T) {
	const key = "k"
	url := guarded(t, Options{APIKey: key})
	tc := guardCase{name: "service name", headers: map[string]string{
		"Host": "runtime.example:8000", api.HeaderAPIKey: key, "Content-Type": "application/json"},
		body: "{}", status: 503, detail: notReady}
	tc.run(t, url)
	tc = guardCase{name: "service name, no key", headers: map[string]string{"Host": "runtime.example:8000"},
		status: 403, detail: "Invalid API Key"}
	tc.run(t, url)
}

func TestGuard_ForeignOriginsAreRefusedWithOrWithoutAKey(t *testing.T) {
	for _, key := range []string{"", "k"} {
		url := guarded(t, Options{APIKey: key, AllowedOrigins: []string{"HTTPS://Tool.Example/"}})
		host := strings.TrimPrefix(url, "http://")
		h := func(origin string) map[string]string {
			m := map[string]string{"Origin": origin, "Content-Type": "application/json"}
			if key != "" {
				m[api.HeaderAPIKey] = key
			}
			return m
		}
		for _, tc := range []guardCase{
			{name: "no origin", headers: h(""), body: "{}", status: 503, detail: notReady},
			{name: "its own origin", headers: h("http://" + host), body: "{}", status: 503, detail: notReady},
			{name: "an allowed origin", headers: h("https://tool.example"), body: "{}", status: 503, detail: notReady},
			{name: "an allowed origin with its default port", headers: h("https://tool.example:443"), body: "{}", status: 503, detail: notReady},
			{name: "another site", headers: h("http://attacker.example"), body: "{}", status: 403,
				detail: `Origin \"http://attacker.example\" is not this server's`},
			{name: "same name, another port", headers: h("http://127.0.0.1:1"), body: "{}", status: 403, detail: "Cross-origin request refused"},
			{name: "null", headers: h("null"), body: "{}", status: 403, detail: `Origin \"null\"`},
			{name: "a websocket from another site", method: "GET", path: "/sessions/default/attach",
				headers: map[string]string{"Origin": "http://attacker.example", api.HeaderAPIKey: key, "Connection": "Upgrade",
					"Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="},
				status: 403, detail: "Cross-origin"},
		} {
			if tc.headers["Origin"] == "" {
				delete(tc.headers, "Origin")
			}
			t.Run(tc.name+" key "+key, func(t *testing.T) { tc.run(t, url) })
		}
	}
}

func TestGuard_BodiesMustBeDeclaredJSON(t *testing.T) {
	url := guarded(t, Options{})
	for _, tc := range []guardCase{
		{name: "json", headers: map[string]string{"Content-Type": "application/json"}, body: "{}", status: 503, detail: notReady},
		{name: "json with charset", headers: map[string]string{"Content-Type": "Application/JSON; charset=utf-8"}, body: "{}", status: 503, detail: notReady},
		{name: "text/plain, as a page sends without preflight", headers: map[string]string{"Content-Type": "text/plain"}, body: `{"action": {}}`,
			status: 415, detail: `Content-Type must be application/json, not \"text/plain\"`},
		{name: "a form", headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: "a=b", status: 415, detail: "application/json"},
		{name: "no type", body: "{}", status: 415, detail: "the request has a body but no Content-Type"},
		{name: "no type on a session route", path: "/sessions/default/input", body: `{"text": "id"}`, status: 415, detail: "no Content-Type"},
		{name: "an empty POST without a type", path: "/sessions", status: 503, detail: notReady},
		{name: "multipart to the upload route", path: "/upload_file", headers: map[string]string{"Content-Type": "multipart/form-data; boundary=x"},
			body: "--x--", status: 503, detail: notReady},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, url) })
	}
}

func TestGuard_ChunkedBodies(t *testing.T) {
	url := guarded(t, Options{})
	for _, tc := range []struct {
		name   string
		chunks string
		status string
	}{{"empty", "0\r\n\r\n", "503"}, {"not empty", "2\r\n{}\r\n0\r\n\r\n", "415"}} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
			require.NoError(t, err)
			defer conn.Close()
			_, err = io.WriteString(conn, "POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"+tc.chunks)
			require.NoError(t, err)
			status, err := bufio.NewReader(conn).ReadString('\n')
			require.NoError(t, err)
			assert.Contains(t, status, " "+tc.status+" ")
		})
	}
}

func TestGuard_RefusedRequestsLearnNoRoutes(t *testing.T) {
	const key = "k"
	url := guarded(t, Options{APIKey: key})
	for _, tc := range []guardCase{
		{name: "no key", method: "PUT", path: "/sessions/default", status: 403, detail: "Invalid API Key"},
		{name: "no key on an MCP route", method: "PUT", path: "/mcp/sse", status: 403, detail: "Invalid API Key"},
		{name: "a foreign origin", method: "PUT", path: "/sessions/default",
			headers: map[string]string{api.HeaderAPIKey: key, "Origin": "http://attacker.example"}, status: 403, detail: "Cross-origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := tc.run(t, url)
			assert.Empty(t, resp.Header.Values("Allow"))
		})
	}
	// With the key, the 405 says what the route takes, as it should.
	resp := guardCase{name: "key", method: "PUT", path: "/sessions/default",
		headers: map[string]string{api.HeaderAPIKey: key}, status: 405, detail: "Method Not Allowed"}.run(t, url)
	assert.Equal(t, "GET, DELETE", resp.Header.Get("Allow"))
}

func TestNormalizeOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://example.com":       "http://example.com",
		"HTTP://Example.COM:80/":   "http://example.com",
		"https://example.com:443":  "https://example.com",
		"https://example.com:8443": "https://example.com:8443",
		"http://[::1]:80":          "http://[::1]",
		"http://[::1]:8000":        "http://[::1]:8000",
		"null":                     "null",
	} {
		assert.Equal(t, want, NormalizeOrigin(in), in)
	}
}

// TestGuard_NativeRefusalsCarryACode checks the envelope of the guard's
// refusals: with a code on a native route, exactly upstream's body on an
// OpenHands route.
func TestGuard_NativeRefusalsCarryACode(t *testing.T) {
	url := guarded(t, Options{APIKey: "k"})
	key := map[string]string{api.HeaderAPIKey: "k"}
	tests := []struct {
		name, method, path, body string
		headers                  map[string]string
		status                   int
		want                     string
	}{
		{"native, no key", "GET", "/sessions", "", nil, 403, `{"detail":"Invalid API Key","code":"unauthorized"}`},
		{"OpenHands, no key", "POST", "/execute_action", "", nil, 403, `{"detail":"Invalid API Key"}`},
		{"native, foreign origin", "GET", "/files/stat?path=/", "", map[string]string{api.HeaderAPIKey: "k", "Origin": "https://evil.example"},
			403, `"code":"forbidden"}`},
		{"native, body not JSON", "POST", "/sessions", "x", map[string]string{api.HeaderAPIKey: "k", "Content-Type": "text/plain"},
			415, `"code":"unsupported_media_type"}`},
		{"native, not ready", "GET", "/sessions", "", key, 503, `{"detail":"Server is not ready","code":"unavailable"}`},
		{"OpenHands, not ready", "POST", "/list_files", "{}", map[string]string{api.HeaderAPIKey: "k", "Content-Type": "application/json"},
			503, `{"detail":"Server is not ready"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req, err := http.NewRequest(tt.method, url+tt.path, body)
			require.NoError(t, err)
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, tt.status, resp.StatusCode)
			if strings.HasPrefix(tt.want, "{") {
				assert.Equal(t, tt.want, string(got))
			} else {
				assert.True(t, strings.HasSuffix(string(got), tt.want), "%s", got)
			}
		})
	}
}
