package container

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
	engine "github.com/actionserver/actionserver/container"
	"github.com/actionserver/actionserver/event"
)

// echoMCPServer is a stdio MCP server with one tool, echo, in the
// image's own Python: the locked-down container has no npm servers.
const echoMCPServer = `import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion", "2024-11-05"),
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "echo", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "description": "Echoes its message",
                             "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "echo: " + params["arguments"]["message"]}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
`

func TestLockedDown_EveryActionThatCanWorkWorks(t *testing.T) {
	for _, tc := range []struct {
		name string
		user string
		uid  string
	}{
		{"uid 10001", "10001", "10001"},
		// As OpenShift assigns: a high uid in group root, in no passwd.
		{"an arbitrary uid in group 0", "1000770000:0", "1000770000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := startSandbox(t, engine.Options{LockedDown: true, User: tc.user})
			ctx := ctxT(t, 5*time.Minute)

			// The lock-down is in force: no capability, no privilege to
			// gain, 512 processes at most.
			status := run(t, c, "grep -E '^(CapEff|CapPrm|NoNewPrivs):' /proc/self/status")
			assert.Contains(t, status, "CapEff:\t0000000000000000")
			assert.Contains(t, status, "CapPrm:\t0000000000000000")
			assert.Contains(t, status, "NoNewPrivs:\t1")
			assert.Equal(t, "512", strings.TrimSpace(run(t, c, "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max")))

			// run
			assert.Equal(t, tc.uid, strings.TrimSpace(run(t, c, "id -u")))
			obs, err := c.Run(ctx, "touch /etc/x", client.RunOptions{Timeout: 30 * time.Second})
			require.NoError(t, err)
			assert.NotEqual(t, 0, obs.Metadata.ExitCode, "the root file system is read-only")
			assert.Contains(t, obs.Content, "Read-only file system")
			obs, err = c.Run(ctx, "sudo true", client.RunOptions{Timeout: 30 * time.Second})
			require.NoError(t, err)
			assert.NotEqual(t, 0, obs.Metadata.ExitCode, "no privilege can be gained")

			// files and edit
			require.NoError(t, c.Write(ctx, "/workspace/notes.txt", "one\ntwo\n"))
			text, err := c.Read(ctx, "/workspace/notes.txt")
			require.NoError(t, err)
			assert.Contains(t, text, "one")
			oldStr, newStr := "two", "three"
			res, err := c.Edit(ctx, &event.FileEdit{Path: "/workspace/notes.txt", Command: "str_replace", OldStr: &oldStr, NewStr: &newStr})
			require.NoError(t, err)
			assert.Contains(t, res.Content, "has been edited")
			assert.Equal(t, "one\nthree", run(t, c, "cat /workspace/notes.txt"))

			// ipython
			timeout := 60.0
			cellObs, err := c.Execute(ctx, &event.IPythonRunCell{Header: event.Header{Timeout: &timeout}, Code: "import os; print('uid', os.getuid())"})
			require.NoError(t, err)
			cell, ok := cellObs.(*event.IPythonOutput)
			require.True(t, ok, "got %T: %s", cellObs, cellObs.Text())
			assert.Contains(t, cell.Content, "uid "+tc.uid)

			// browser, on a page served inside the sandbox
			run(t, c, `mkdir -p /tmp/site && echo '<html><title>Locked</title><body><h1>locked down page</h1></body></html>' > /tmp/site/index.html && (python3 -m http.server 8123 --bind 127.0.0.1 --directory /tmp/site >/dev/null 2>&1 &) && sleep 1`)
			browseObs, err := c.Execute(ctx, &event.BrowseURL{Header: event.Header{Timeout: &timeout}, URL: "http://127.0.0.1:8123/", SecurityRisk: event.RiskUnknown})
			require.NoError(t, err)
			b, ok := browseObs.(*event.BrowserOutput)
			require.True(t, ok, "got %T: %s", browseObs, browseObs.Text())
			assert.False(t, b.Error, b.LastBrowserActionError)
			assert.Contains(t, b.Content, "locked down page")

			// MCP: a stdio server started as the sandbox's uid
			require.NoError(t, c.Write(ctx, "/tmp/echo_mcp.py", echoMCPServer))
			mcpEcho(t, ctx, s)

			// The one thing it could not do is said once, clearly; the
			// server is still up.
			logs := containerLogs(t, s.Name)
			assert.Equal(t, 1, strings.Count(logs, "without root"), "logs:\n%s", logs)
			assert.NotContains(t, logs, "panic")
			require.NoError(t, c.Alive(ctx))
		})
	}
}

// mcpEcho configures the echo server and calls its tool through the
// server's /mcp/sse, as the host does.
func mcpEcho(t *testing.T, ctx context.Context, s *engine.Sandbox) {
	t.Helper()
	body, err := json.Marshal([]map[string]any{{"name": "echo", "command": "python3", "args": []string{"/tmp/echo_mcp.py"}}})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/update_mcp_server", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Session-API-Key", s.APIKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var out struct {
		Log string `json:"router_error_log"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, out.Log)

	hc := &http.Client{Transport: keyTransport(s.APIKey)}
	session, err := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil).
		Connect(ctx, &sdk.SSEClientTransport{Endpoint: s.URL + "/mcp/sse", HTTPClient: hc}, nil)
	require.NoError(t, err)
	defer session.Close()
	var name string
	for tool, err := range session.Tools(ctx, nil) {
		require.NoError(t, err)
		if strings.Contains(tool.Name, "echo") {
			name = tool.Name
		}
	}
	require.NotEmpty(t, name, "the echo tool is offered")
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: map[string]any{"message": "locked"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Len(t, res.Content, 1)
	text, ok := res.Content[0].(*sdk.TextContent)
	require.True(t, ok, "%T", res.Content[0])
	assert.Equal(t, "echo: locked", text.Text)
}

type keyTransport string

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Session-API-Key", string(k))
	return http.DefaultTransport.RoundTrip(r)
}
