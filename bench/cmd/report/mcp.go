package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
	"github.com/actionserver/actionserver/internal/mcptest"
)

// measureMCP measures the MCP proxy: tools/call of the everything server's echo
// tool through /mcp/sse against the same call made directly to the same
// server over stdio (the floor), and the server's own memory for each
// stdio server it holds (node's memory is not counted).
func measureMCP(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	ev, err := mcptest.Lookup("server-everything", "stdio")
	if err != nil {
		return nil, fmt.Errorf("%w (scripts/deps.sh installs it)", err)
	}
	s, err := benchkit.StartServer(ctx, env)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	pid := s.Cmd.Process.Pid

	if err := updateMCP(ctx, s.URL, ev, 1); err != nil {
		return nil, err
	}
	proxied, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &sdk.SSEClientTransport{Endpoint: s.URL + "/mcp/sse"}, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to /mcp/sse: %w", err)
	}
	defer proxied.Close()
	direct, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: exec.Command(ev.Command, ev.Args...)}, nil)
	if err != nil {
		return nil, fmt.Errorf("start the everything server: %w", err)
	}
	defer direct.Close()

	n := env.Iterations(1000)
	var viaProxy, viaStdio []time.Duration
	// Interleaved, so both see the same machine load.
	for i := range n + n/10 {
		dp, err := echo(ctx, proxied, "echo")
		if err != nil {
			return nil, fmt.Errorf("through the proxy: %w", err)
		}
		dd, err := echo(ctx, direct, "echo")
		if err != nil {
			return nil, fmt.Errorf("directly: %w", err)
		}
		if i >= n/10 {
			viaProxy, viaStdio = append(viaProxy, dp), append(viaStdio, dd)
		}
	}
	p50, p99 := benchkit.Percentile(viaProxy, 50), benchkit.Percentile(viaProxy, 99)
	f50, f99 := benchkit.Percentile(viaStdio, 50), benchkit.Percentile(viaStdio, 99)

	// Memory per held server: the server's benchkit.RSS holding 1 and then 5.
	const more = 4
	rss1, err := benchkit.RSS(pid, false)
	if err != nil {
		return nil, err
	}
	if err := updateMCP(ctx, s.URL, ev, 1+more); err != nil {
		return nil, err
	}
	rss5, err := benchkit.RSS(pid, false)
	if err != nil {
		return nil, err
	}
	perServer := (rss5 - rss1) / more

	return []benchkit.Row{
		{Metric: "MCP tools/call echo through /mcp/sse p50", Value: benchkit.Ms(p50), Floor: benchkit.Ms(f50) + " (same server over stdio)",
			Ratio: benchkit.Ratio(float64(p50), float64(f50))},
		{Metric: "MCP tools/call echo through /mcp/sse p99", Value: benchkit.Ms(p99), Floor: benchkit.Ms(f99),
			Ratio: benchkit.Ratio(float64(p99), float64(f99))},
		{Metric: "server RSS per stdio MCP server held (node's own not counted)", Value: fmt.Sprintf("%.0f kB", float64(perServer)/1024)},
	}, nil
}

// updateMCP configures n copies of the everything server.
func updateMCP(ctx context.Context, url string, ev mcptest.Server, n int) error {
	var cfgs []map[string]any
	for i := range n {
		cfgs = append(cfgs, map[string]any{"name": fmt.Sprintf("everything%d", i), "command": ev.Command, "args": ev.Args})
	}
	if n == 1 {
		cfgs[0]["name"] = "everything"
	}
	body, err := json.Marshal(cfgs)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/update_mcp_server", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("update MCP servers: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		Log string `json:"router_error_log"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("update MCP servers: status %d: %v", resp.StatusCode, err)
	}
	if out.Log != "" {
		return fmt.Errorf("update MCP servers: %s", out.Log)
	}
	return nil
}

// echo times one tools/call of the echo tool.
func echo(ctx context.Context, s *sdk.ClientSession, tool string) (time.Duration, error) {
	start := time.Now()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"message": "ping"}})
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if res.IsError || len(res.Content) != 1 {
		return 0, fmt.Errorf("echo answered %+v", res)
	}
	return d, nil
}
