package main

import (
	"bytes"
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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/executor"
	"github.com/actionserver/actionserver/internal/mcptest"
	"github.com/actionserver/actionserver/server"
)

func TestMCP_ToolsAndCall(t *testing.T) {
	const key = "k"
	e, err := executor.New(context.Background(), executor.Options{WorkDir: t.TempDir(),
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}})
	require.NoError(t, err)
	srv := server.New(server.Options{APIKey: key, IdleTrim: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MCP: e.MCP()})
	srv.SetReady(e)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		e.Close(ctx)
		hs.Close()
	})
	ev := mcptest.Everything(t)
	body, err := json.Marshal([]map[string]any{{"name": "everything", "command": ev.Command, "args": ev.Args}})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, hs.URL+"/update_mcp_server", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(api.HeaderAPIKey, key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	run := func(apiKey string, args ...string) (string, string, int, error) {
		var out, errOut bytes.Buffer
		a := &app{stdout: &out, stderr: &errOut}
		root := a.rootCmd()
		root.SetArgs(append([]string{"--url", hs.URL, "--api-key", apiKey}, args...))
		err := root.Execute()
		return out.String(), errOut.String(), a.code, err
	}

	out, _, _, err := run(key, "mcp", "tools")
	require.NoError(t, err)
	assert.Contains(t, out, "echo ")
	assert.Contains(t, out, "get-sum ")

	out, _, code, err := run(key, "mcp", "call", "echo", `{"message": "from actionctl"}`)
	require.NoError(t, err)
	assert.Equal(t, 0, code)
	assert.Equal(t, "Echo: from actionctl\n", out)

	out, _, _, err = run(key, "--json", "mcp", "call", "get-sum", `{"a": 2, "b": 3}`)
	require.NoError(t, err)
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Content, 1)
	assert.Contains(t, res.Content[0].Text, "is 5")

	_, errOut, code, err := run(key, "mcp", "call", "get-sum", `{"a": "x"}`)
	require.NoError(t, err)
	assert.Equal(t, exitError, code)
	assert.NotEmpty(t, strings.TrimSpace(errOut))

	_, _, _, err = run("wrong", "mcp", "tools")
	assert.Equal(t, exitAuth, exitCodeOf(err))
}
