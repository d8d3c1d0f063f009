package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/mcptest"
	"github.com/actionserver/actionserver/mcp"
)

// proxy is a Manager served over loopback at /mcp, as the server mounts it.
type proxy struct {
	m   *mcp.Manager
	url string
}

func newProxy(t *testing.T, opts mcp.Options) *proxy { return newProxyTB(t, opts) }

func newProxyTB(t testing.TB, opts mcp.Options) *proxy {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	m := mcp.NewManager(opts)
	mux := http.NewServeMux()
	mux.Handle("/mcp/", m.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, m.Close(ctx))
		srv.Close()
	})
	return &proxy{m: m, url: srv.URL + "/mcp/sse"}
}

// connect opens an MCP session through the proxy with the SDK's SSE client,
// as the host's client does.
func (p *proxy) connect(t *testing.T) *sdk.ClientSession {
	t.Helper()
	// The SSE stream lives as long as Connect's context: not a timeout.
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &sdk.SSEClientTransport{Endpoint: p.url}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func (p *proxy) update(t *testing.T, cfgs ...mcp.ServerConfig) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log, err := p.m.Update(ctx, cfgs)
	require.NoError(t, err)
	return log
}

func config(name string, s mcptest.Server) mcp.ServerConfig {
	return mcp.ServerConfig{Name: name, Command: s.Command, Args: s.Args}
}

func toolNames(t *testing.T, s *sdk.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var names []string
	for tool, err := range s.Tools(ctx, nil) {
		require.NoError(t, err)
		names = append(names, tool.Name)
	}
	return names
}

func call(t *testing.T, s *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return res
}

func text(res *sdk.CallToolResult) string {
	var out string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			out += tc.Text
		}
	}
	return out
}

func status(m *mcp.Manager, name string) mcp.ServerStatus {
	for _, st := range m.Status() {
		if st.Name == name {
			return st
		}
	}
	return mcp.ServerStatus{}
}

func TestProxy_NamesToolsAsFastMCPDoes(t *testing.T) {
	ws := t.TempDir()
	tests := []struct {
		name    string
		servers []mcp.ServerConfig
		want    []string
		absent  []string
	}{
		{"one server keeps its names", []mcp.ServerConfig{config("everything", mcptest.Everything(t))},
			[]string{"echo", "get-sum"}, []string{"everything_echo"}},
		{"several servers are prefixed", []mcp.ServerConfig{config("everything", mcptest.Everything(t)), config("fs", mcptest.Filesystem(t, ws))},
			[]string{"everything_echo", "fs_read_text_file"}, []string{"echo", "read_text_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProxy(t, mcp.Options{})
			assert.Empty(t, p.update(t, tt.servers...))
			names := toolNames(t, p.connect(t))
			for _, w := range tt.want {
				assert.Contains(t, names, w)
			}
			for _, a := range tt.absent {
				assert.NotContains(t, names, a)
			}
		})
	}
}

func TestProxy_CallsToolsOfEachServer(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "note.txt"), []byte("hello from the workspace"), 0o644))
	p := newProxy(t, mcp.Options{Dir: ws})
	assert.Empty(t, p.update(t, config("everything", mcptest.Everything(t)), config("fs", mcptest.Filesystem(t, ws))))
	s := p.connect(t)

	res := call(t, s, "everything_echo", map[string]any{"message": "hi there"})
	assert.False(t, res.IsError)
	assert.Contains(t, text(res), "hi there")

	res = call(t, s, "fs_read_text_file", map[string]any{"path": filepath.Join(ws, "note.txt")})
	assert.False(t, res.IsError, text(res))
	assert.Contains(t, text(res), "hello from the workspace")

	// A tool's own error is forwarded as the tool's result.
	res = call(t, s, "fs_read_text_file", map[string]any{"path": "/etc/passwd"})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "denied")

	// Prompts are forwarded too.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prompts, err := s.ListPrompts(ctx, nil)
	require.NoError(t, err)
	require.NotEmpty(t, prompts.Prompts)
	assert.Contains(t, prompts.Prompts[0].Name, "everything_")

	// And static resources, their URIs prefixed as FastMCP does:
	// proto://<server>/path.
	resources, err := s.ListResources(ctx, nil)
	require.NoError(t, err)
	require.NotEmpty(t, resources.Resources)
	uri := resources.Resources[0].URI
	assert.Regexp(t, `^[a-z]+://everything/`, uri)
	read, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	require.NoError(t, err)
	require.NotEmpty(t, read.Contents)
	assert.Equal(t, uri, read.Contents[0].URI)
	assert.True(t, read.Contents[0].Text != "" || len(read.Contents[0].Blob) > 0)
}

func TestProxy_ServerGetsSandboxEnvPlusItsOwn(t *testing.T) {
	p := newProxy(t, mcp.Options{Env: append(os.Environ(), "SANDBOX_ONLY=sandbox")})
	ev := mcptest.Everything(t)
	cfg := config("everything", ev)
	cfg.Env = map[string]string{"SERVER_ONLY": "server", "SANDBOX_ONLY": "overridden"}
	assert.Empty(t, p.update(t, cfg))
	res := call(t, p.connect(t), "get-env", map[string]any{})
	require.False(t, res.IsError, text(res))
	var env map[string]string
	require.NoError(t, json.Unmarshal([]byte(text(res)), &env))
	assert.Equal(t, "server", env["SERVER_ONLY"])
	assert.Equal(t, "overridden", env["SANDBOX_ONLY"])
}

func TestUpdate_MissingCommandIsReportedWhileOthersWork(t *testing.T) {
	p := newProxy(t, mcp.Options{RestartMin: time.Hour})
	log := p.update(t, config("everything", mcptest.Everything(t)),
		mcp.ServerConfig{Name: "broken", Command: "no-such-mcp-server-binary"})
	assert.Contains(t, log, "broken")
	assert.Contains(t, log, "no-such-mcp-server-binary")
	assert.NotContains(t, log, "everything")

	res := call(t, p.connect(t), "everything_echo", map[string]any{"message": "still works"})
	assert.Contains(t, text(res), "still works")
	assert.Equal(t, mcp.StateRestarting, status(p.m, "broken").State)
	assert.Equal(t, mcp.StateRunning, status(p.m, "everything").State)
}

func TestUpdate_KeepsUnchangedServersAndStopsRemovedOnes(t *testing.T) {
	ws := t.TempDir()
	p := newProxy(t, mcp.Options{})
	assert.Empty(t, p.update(t, config("a", mcptest.Everything(t)), config("b", mcptest.Filesystem(t, ws))))
	keptPID, removedPID := status(p.m, "a").PID, status(p.m, "b").PID
	require.NotZero(t, keptPID)
	require.NotZero(t, removedPID)

	assert.Empty(t, p.update(t, config("a", mcptest.Everything(t)), config("c", mcptest.Filesystem(t, ws))))
	assert.Equal(t, keptPID, status(p.m, "a").PID, "an unchanged server must not be restarted")
	assert.Equal(t, mcp.StateRunning, status(p.m, "c").State)
	assert.Equal(t, mcp.ServerStatus{}, status(p.m, "b"))
	assert.ErrorIs(t, syscall.Kill(removedPID, 0), syscall.ESRCH, "a removed server's process must be gone")

	names := toolNames(t, p.connect(t))
	assert.Contains(t, names, "a_echo")
	assert.Contains(t, names, "c_read_text_file")
	assert.NotContains(t, names, "b_read_text_file")

	// Going back to one server drops the prefix, as FastMCP's proxy does.
	assert.Empty(t, p.update(t, config("a", mcptest.Everything(t))))
	assert.Equal(t, keptPID, status(p.m, "a").PID)
	names = toolNames(t, p.connect(t))
	assert.Contains(t, names, "echo")
	assert.NotContains(t, names, "a_echo")
}

func TestProxy_ServerKilledMidCallAnswersAndRestarts(t *testing.T) {
	p := newProxy(t, mcp.Options{RestartMin: 50 * time.Millisecond})
	assert.Empty(t, p.update(t, config("everything", mcptest.Everything(t))))
	s := p.connect(t)
	pid := status(p.m, "everything").PID
	require.NotZero(t, pid)

	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "trigger-long-running-operation",
			Arguments: map[string]any{"duration": 50, "steps": 50}})
		if err != nil {
			res = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "client: " + err.Error()}}}
		}
		done <- res
	}()
	// Kill it once the call is in flight.
	require.Eventually(t, func() bool { return status(p.m, "everything").Calls == 1 }, 30*time.Second, 5*time.Millisecond)
	require.NoError(t, syscall.Kill(-pid, syscall.SIGKILL))

	res := <-done
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "Error calling tool")

	require.Eventually(t, func() bool {
		st := status(p.m, "everything")
		return st.State == mcp.StateRunning && st.PID != pid
	}, 30*time.Second, 20*time.Millisecond, "the server must come back")
	assert.Equal(t, 1, status(p.m, "everything").Restarts)
	res = call(t, s, "echo", map[string]any{"message": "back"})
	assert.Contains(t, text(res), "back")
}

func TestProxy_HungCallTimesOut(t *testing.T) {
	p := newProxy(t, mcp.Options{CallTimeout: time.Second})
	assert.Empty(t, p.update(t, config("everything", mcptest.Everything(t))))
	s := p.connect(t)
	res := call(t, s, "trigger-long-running-operation", map[string]any{"duration": 30, "steps": 3})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "did not answer within 1s")
	// The server is still usable.
	assert.Contains(t, text(call(t, s, "echo", map[string]any{"message": "after"})), "after")
}

func TestProxy_ConcurrentCalls(t *testing.T) {
	p := newProxy(t, mcp.Options{})
	assert.Empty(t, p.update(t, config("everything", mcptest.Everything(t))))
	s := p.connect(t)
	var wg sync.WaitGroup
	results := make([]string, 20)
	for i := range results {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": fmt.Sprint("n", i)}})
			if err != nil {
				results[i] = err.Error()
				return
			}
			results[i] = text(res)
		})
	}
	wg.Wait()
	for i, r := range results {
		assert.Equal(t, fmt.Sprintf("Echo: n%d", i), r)
	}
}

func TestClose_StopsEveryServer(t *testing.T) {
	m := mcp.NewManager(mcp.Options{Dir: t.TempDir(), Env: os.Environ()})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := m.Update(ctx, []mcp.ServerConfig{config("a", mcptest.Everything(t)), config("b", mcptest.Everything(t))})
	require.NoError(t, err)
	var pids []int
	for _, st := range m.Status() {
		require.NotZero(t, st.PID)
		pids = append(pids, st.PID)
	}
	closeCtx, cancelClose := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelClose()
	require.NoError(t, m.Close(closeCtx))
	for _, pid := range pids {
		assert.ErrorIs(t, syscall.Kill(-pid, 0), syscall.ESRCH)
	}
	assert.True(t, slices.Equal(m.Status(), []mcp.ServerStatus{}))
}

func TestProxy_ServerRunsAsTheSandboxUserInTheWorkspace(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("switching users needs root")
	}
	// t.TempDir's parent is closed to other users.
	ws, err := os.MkdirTemp("", "mcp-ws-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(ws) })
	require.NoError(t, os.Chmod(ws, 0o777))
	p := newProxy(t, mcp.Options{Dir: ws, Credential: &syscall.Credential{Uid: 65534, Gid: 65534}})
	log := p.update(t, config("everything", mcptest.Everything(t)))
	if log != "" {
		t.Skipf("the user cannot run the installed server here: %s", log)
	}
	pid := status(p.m, "everything").PID
	require.NotZero(t, pid)
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^Uid:\s+65534\s`, string(st))
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	require.NoError(t, err)
	assert.Equal(t, ws, cwd)
	pgid, err := syscall.Getpgid(pid)
	require.NoError(t, err)
	assert.Equal(t, pid, pgid, "each server leads its own process group")
}

func TestProxy_ForwardsCancellation(t *testing.T) {
	p := newProxy(t, mcp.Options{})
	assert.Empty(t, p.update(t, config("everything", mcptest.Everything(t))))
	s := p.connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "trigger-long-running-operation",
			Arguments: map[string]any{"duration": 60, "steps": 60}})
		errc <- err
	}()
	require.Eventually(t, func() bool { return status(p.m, "everything").Calls == 1 }, 30*time.Second, 5*time.Millisecond)
	cancel()
	assert.Error(t, <-errc)
	// The proxy's own call to the server ends with it, long before the
	// operation's minute is up.
	require.Eventually(t, func() bool { return status(p.m, "everything").Calls == 0 }, 20*time.Second, 10*time.Millisecond)
	assert.Contains(t, text(call(t, s, "echo", map[string]any{"message": "next"})), "next")
}

func TestClose_DuringUpdateLeavesNothingRunning(t *testing.T) {
	m := mcp.NewManager(mcp.Options{Dir: t.TempDir(), Env: os.Environ()})
	ev := mcptest.Everything(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	updated := make(chan error, 1)
	go func() {
		_, err := m.Update(ctx, []mcp.ServerConfig{config("a", ev), config("b", ev)})
		updated <- err
	}()
	closeCtx, cancelClose := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelClose()
	require.NoError(t, m.Close(closeCtx))
	select {
	case <-updated: // done or refused; either way it returned
	case <-ctx.Done():
		t.Fatal("Update did not return after Close")
	}
	_, err := m.Update(ctx, []mcp.ServerConfig{config("a", ev)})
	assert.ErrorContains(t, err, "closed")
	assert.Empty(t, m.Status())
	assert.Empty(t, childrenRunning(t, ev.Args[0]), "no server process may outlive Close")
}

// childrenRunning lists this process's children whose command line
// mentions script and that have not exited.
func childrenRunning(t *testing.T, script string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	require.NoError(t, err)
	var found []string
	for _, d := range dirs {
		st, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
		if len(f) < 2 || f[0] == "Z" || f[1] != fmt.Sprint(os.Getpid()) {
			continue
		}
		if cmd, _ := os.ReadFile(d + "/cmdline"); strings.Contains(string(cmd), script) {
			found = append(found, d)
		}
	}
	return found
}
