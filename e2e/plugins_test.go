package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/event"
)

func ipython(code string, timeout float64) *event.IPythonRunCell {
	a := &event.IPythonRunCell{Code: code, IncludeExtra: true, ConfirmationState: "confirmed", SecurityRisk: event.RiskUnknown}
	if timeout > 0 {
		a.Timeout = &timeout
	}
	return a
}

func TestJupyter_ThroughTheAPI(t *testing.T) {
	ws := t.TempDir()
	s := startServer(t, startOpts{workDir: ws, args: []string{"--working-dir", ws, "--no-enable-browser", "--plugins", "jupyter"}})
	ctx := ctxT(t)

	// /alive answered 200 only once the kernel could run cells.
	obs, err := s.Client.Execute(ctx, ipython("print(6 * 7)", 30))
	require.NoError(t, err)
	out, ok := obs.(*event.IPythonOutput)
	require.True(t, ok, "%T %v", obs, obs)
	lines := strings.Split(out.Content, "\n")
	require.Len(t, lines, 3, out.Content)
	assert.Equal(t, "42", lines[0])
	assert.Equal(t, "[Jupyter current working directory: "+ws+"]", lines[1])
	assert.True(t, strings.HasPrefix(lines[2], "[Jupyter Python interpreter: /"), lines[2])
	assert.Equal(t, "print(6 * 7)", out.Code)

	// The kernel follows the shell's cd.
	_, err = s.Client.Run(ctx, "mkdir -p sub && cd sub", client.RunOptions{})
	require.NoError(t, err)
	obs, err = s.Client.Execute(ctx, ipython("import os; print(os.getcwd())", 30))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(obs.Text(), filepath.Join(ws, "sub")+"\n"), obs.Text())

	// A timeout interrupts the cell with upstream's text.
	obs, err = s.Client.Execute(ctx, ipython("import time; time.sleep(60)", 1))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(obs.Text(), "[Execution timed out (1.0 seconds).]\n"), obs.Text())

	// The wire form keeps image_urls null without images.
	body, _ := json.Marshal(map[string]any{"action": map[string]any{"action": "run_ipython",
		"args": map[string]any{"code": "1+1", "include_extra": false}}})
	resp, err := http.Post(s.URL+"/execute_action", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	var wire map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&wire))
	resp.Body.Close()
	assert.Equal(t, "2", wire["content"])
	assert.Equal(t, map[string]any{"code": "1+1", "image_urls": nil}, wire["extras"])

	info, err := s.Client.ServerInfo(ctx)
	require.NoError(t, err)
	require.Len(t, info.Plugins, 1)
	assert.Equal(t, "jupyter", info.Plugins[0].Name)
	assert.Equal(t, api.PluginReady, info.Plugins[0].State)
	assert.NotZero(t, info.Plugins[0].Port)

	// No vscode plugin: the token is null.
	resp, err = http.Get(s.URL + "/vscode/connection_token")
	require.NoError(t, err)
	var tok map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tok))
	resp.Body.Close()
	assert.Equal(t, map[string]any{"token": nil}, tok)

	out2, err := exec.Command(filepath.Join(binDir, "actionctl"), "--url", s.URL, "ipython", "print(1)").Output()
	require.NoError(t, err)
	assert.Equal(t, "1\n", string(out2))
}

func TestPlugins_ShutdownEndsJupyter(t *testing.T) {
	ws := t.TempDir()
	s := startServer(t, startOpts{workDir: ws, args: []string{"--working-dir", ws, "--no-enable-browser", "--plugins", "jupyter"}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obs, err := s.Client.Execute(ctx, ipython("import os; print(os.getpid())", 30))
	require.NoError(t, err)
	pid := strings.SplitN(obs.Text(), "\n", 2)[0]
	s.stop()
	// Neither the kernel nor the Jupyter Server outlives the action server.
	assert.Eventually(t, func() bool {
		return exec.Command("kill", "-0", pid).Run() != nil
	}, 10*time.Second, 50*time.Millisecond, "kernel %s still running", pid)
}

func TestVSCode_TokenThroughTheAPI(t *testing.T) {
	ws := t.TempDir()
	port := freePort(t)
	s := startServer(t, startOpts{workDir: ws, args: []string{"--working-dir", ws, "--no-enable-browser", "--plugins", "vscode"},
		env: []string{fmt.Sprintf("VSCODE_PORT=%d", port)}})
	token, err := s.Client.VSCodeToken(ctxT(t))
	require.NoError(t, err)
	require.NotEmpty(t, token, "the server log says why VS Code did not start")

	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(fmt.Sprintf("http://127.0.0.1:%d/?tkn=%s&folder=%s", port, token, ws))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, err = http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	info, err := s.Client.ServerInfo(ctxT(t))
	require.NoError(t, err)
	require.Len(t, info.Plugins, 1)
	assert.Equal(t, api.PluginReady, info.Plugins[0].State)
	assert.Equal(t, port, info.Plugins[0].Port)
}
