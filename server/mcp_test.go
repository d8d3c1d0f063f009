package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/executor"
	"github.com/actionserver/actionserver/internal/mcptest"
)

// newMCPServer serves a ready Server with the given API key on loopback.
func newMCPServer(t *testing.T, apiKey string) string {
	t.Helper()
	e, err := executor.New(context.Background(), executor.Options{
		WorkDir: t.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()},
	})
	require.NoError(t, err)
	s := New(Options{APIKey: apiKey, IdleTrim: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MCP: e.MCP()})
	s.SetReady(e)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		e.Close(ctx)
		srv.Close()
	})
	return srv.URL
}

// post sends body to path with the given headers and returns the status
// and the body.
func post(t *testing.T, url, body string, headers map[string]string) (int, string) {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range headers {
		h[k] = v
	}
	return call(t, http.MethodPost, url, body, h)
}

func everythingJSON(t *testing.T, name string) string {
	ev := mcptest.Everything(t)
	b, err := json.Marshal(map[string]any{"name": name, "command": ev.Command, "args": ev.Args, "env": map[string]string{}})
	require.NoError(t, err)
	return string(b)
}

// headerTransport adds headers to every request, as the host's MCP client
// does.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func mcpConnect(t *testing.T, url string, headers map[string]string) (*sdk.ClientSession, error) {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &sdk.SSEClientTransport{
		Endpoint: url + "/mcp/sse", HTTPClient: &http.Client{Transport: headerTransport(headers)}}, nil)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

func TestUpdateMCPServer_AnswersAsUpstream(t *testing.T) {
	url := newMCPServer(t, "")
	tests := []struct {
		name   string
		body   string
		status int
		want   string
	}{
		{"an object", `{"name": "x", "command": "y"}`, 400, `{"detail": "Request must be a list of MCP tools to sync"}`},
		{"not JSON", `not json`, 400, `{"detail": "Request must be a list of MCP tools to sync"}`},
		// Upstream answers these with its generic 500; the host only logs a
		// failed update, so the client is told its mistake.
		{"a bad name", `[{"name": "a b", "command": "y"}]`, 400,
			`{"detail": "MCP server 0: Server name can only contain letters, numbers, hyphens, and underscores"}`},
		{"an empty command", `[{"name": "a", "command": " "}]`, 400, `{"detail": "MCP server 0: Command cannot be empty"}`},
		{"args of the wrong type", `[{"name": "a", "command": "y"}, {"name": "b", "command": "y", "args": [1]}]`, 400,
			`{"detail": "MCP server 1: args must be a list of strings: expected a string, not number"}`},
		{"a name of the wrong type", `[{"name": 5, "command": "y"}]`, 400,
			`{"detail": "MCP server 0: not an object with string fields: field \"name\" must be a string, not number"}`},
		{"an empty list", `[]`, 200, `{"detail": "MCP server updated successfully", "router_error_log": ""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, url+"/update_mcp_server", tt.body, nil)
			assert.Equal(t, tt.status, status)
			assert.JSONEq(t, tt.want, body)
		})
	}
}

func TestMCP_UpdateThenCallThroughTheProxy(t *testing.T) {
	url := newMCPServer(t, "")
	// Not mounted before an update names a server.
	resp, err := http.Get(url + "/mcp/sse")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	status, body := post(t, url+"/update_mcp_server",
		"["+everythingJSON(t, "everything")+`, {"name": "broken", "command": "no-such-mcp-binary"}]`, nil)
	require.Equal(t, http.StatusOK, status, body)
	var out struct {
		Detail string `json:"detail"`
		Log    string `json:"router_error_log"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	assert.Equal(t, "MCP server updated successfully", out.Detail)
	assert.Contains(t, out.Log, "broken: ")
	assert.Contains(t, out.Log, "no-such-mcp-binary")

	s, err := mcpConnect(t, url, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "everything_echo", Arguments: map[string]any{"message": "via the server"}})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	assert.Equal(t, "Echo: via the server", res.Content[0].(*sdk.TextContent).Text)

	// /server_info shows both servers.
	resp, err = http.Get(url + "/server_info")
	require.NoError(t, err)
	var info struct {
		MCP []api.MCPServerStatus `json:"mcp_servers"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&info))
	resp.Body.Close()
	require.Len(t, info.MCP, 2)
	assert.Equal(t, "everything", info.MCP[0].Name)
	assert.Equal(t, api.MCPRunning, info.MCP[0].State)
	assert.NotZero(t, info.MCP[0].PID)
	assert.Equal(t, "broken", info.MCP[1].Name)
	assert.Equal(t, api.MCPRestarting, info.MCP[1].State)
	assert.Contains(t, info.MCP[1].Error, "no-such-mcp-binary")
}

func TestMCP_AcceptsTheKeyInAnyOfTheHostsHeaders(t *testing.T) {
	const key = "secret-key"
	url := newMCPServer(t, key)
	status, body := post(t, url+"/update_mcp_server", "["+everythingJSON(t, "everything")+"]", nil)
	require.Equal(t, http.StatusForbidden, status, "the update route keeps the usual check")
	assert.JSONEq(t, `{"detail": "Invalid API Key"}`, body)
	status, body = post(t, url+"/update_mcp_server", "["+everythingJSON(t, "everything")+"]", map[string]string{api.HeaderAPIKey: key})
	require.Equal(t, http.StatusOK, status, body)

	tests := []struct {
		name    string
		headers map[string]string
		ok      bool
	}{
		{"bearer", map[string]string{"Authorization": "Bearer " + key}, true},
		{"s", map[string]string{"s": key}, true},
		{"X-Session-API-Key", map[string]string{api.HeaderAPIKey: key}, true},
		{"all three, as the host sends them", map[string]string{"Authorization": "Bearer " + key, "s": key, api.HeaderAPIKey: key}, true},
		{"none", nil, false},
		{"a wrong key", map[string]string{"Authorization": "Bearer nope", "s": "nope", api.HeaderAPIKey: "nope"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := mcpConnect(t, url, tt.headers)
			if !tt.ok {
				assert.Error(t, err)
				// The messages route is guarded too.
				status, body := post(t, url+"/mcp/messages/?session_id=x", `{}`, tt.headers)
				assert.Equal(t, http.StatusForbidden, status)
				assert.JSONEq(t, `{"detail": "Invalid API Key"}`, body)
				return
			}
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tools, err := s.ListTools(ctx, nil)
			require.NoError(t, err)
			assert.NotEmpty(t, tools.Tools)
		})
	}

	req, err := http.NewRequest(http.MethodGet, url+"/mcp/sse", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

func TestMCP_NoKeyNeededWithoutSessionAPIKey(t *testing.T) {
	url := newMCPServer(t, "")
	status, body := post(t, url+"/update_mcp_server", "["+everythingJSON(t, "everything")+"]", nil)
	require.Equal(t, http.StatusOK, status, body)
	s, err := mcpConnect(t, url, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := s.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	assert.Contains(t, names, "echo", "a single server's tools keep their names")
}
