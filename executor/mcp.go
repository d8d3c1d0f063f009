package executor

import (
	"context"
	"errors"
	"time"

	"github.com/actionserver/actionserver/mcp"
)

// MCPServerConfig is one stdio MCP server the host asks for.
type MCPServerConfig = mcp.ServerConfig

// Errors of ParseMCPServers, both of KindInvalid.
var (
	// ErrMCPNotList: the body is not a JSON list.
	ErrMCPNotList = sentinel(KindInvalid, mcp.ErrNotList)
	// ErrMCPConfig: an entry breaks upstream's rules (its name, its
	// command); the error's text says which and why.
	ErrMCPConfig = sentinel(KindInvalid, errors.New("invalid MCP server config"))
)

// ParseMCPServers decodes and validates the host's list of stdio MCP
// servers with upstream's rules.
func ParseMCPServers(data []byte) ([]MCPServerConfig, error) {
	cfgs, err := mcp.ParseConfigs(data)
	switch {
	case errors.Is(err, mcp.ErrNotList):
		return nil, ErrMCPNotList.with(err)
	case err != nil:
		return nil, ErrMCPConfig.with(err)
	}
	return cfgs, nil
}

// newMCP makes the MCP proxy: the servers run as the shells do, as the
// sandbox user in the workspace with the sandbox's environment.
func (e *Executor) newMCP() *mcp.Manager {
	return mcp.NewManager(mcp.Options{
		Credential:  e.opts.Credential,
		Dir:         e.opts.WorkDir,
		Env:         e.opts.Env,
		Logger:      e.log.With("component", "mcp"),
		CallTimeout: e.opts.MCPTimeout,
	})
}

// UpdateMCPServers replaces the stdio MCP servers behind the proxy and
// returns a log naming each that failed to start, and why ("" when all
// started).
func (e *Executor) UpdateMCPServers(ctx context.Context, servers []MCPServerConfig) (string, error) {
	return e.mcp.Update(ctx, servers)
}

// MCP returns the MCP proxy. Serving it is the front end's business: the
// executor knows no HTTP, so cmd/action-server hands it to the server,
// which mounts its handler once an update has named a server.
func (e *Executor) MCP() *mcp.Manager {
	return e.mcp
}

// MCPState is a stdio MCP server's state. Front ends map it to their wire
// names.
type MCPState int

// The states of a stdio MCP server.
const (
	MCPStopped MCPState = iota
	MCPStarting
	MCPRunning
	// MCPRestarting: it died or failed to start; it is tried again after
	// a backoff.
	MCPRestarting
)

// MCPServerStatus is one stdio MCP server behind the proxy.
type MCPServerStatus struct {
	Name    string
	Command string
	State   MCPState
	// PID of the running process; 0 when none.
	PID int
	// Tools is how many tools it offers.
	Tools int
	// Calls is how many forwarded calls are in flight.
	Calls int
	// Restarts counts the starts after the first.
	Restarts int
	// Error is why the last start failed or the last run ended.
	Error string
}

// MCPServers returns the stdio MCP servers' states.
func (e *Executor) MCPServers() []MCPServerStatus {
	sts := e.mcp.Status()
	out := make([]MCPServerStatus, len(sts))
	for i, st := range sts {
		out[i] = MCPServerStatus{Name: st.Name, Command: st.Command, State: mcpState(st.State),
			PID: st.PID, Tools: st.Tools, Calls: st.Calls, Restarts: st.Restarts, Error: st.Error}
	}
	return out
}

// mcpState is a server's state as the executor reports it, so a rename
// inside mcp/ cannot change what clients receive.
func mcpState(s string) MCPState {
	switch s {
	case mcp.StateStarting:
		return MCPStarting
	case mcp.StateRunning:
		return MCPRunning
	case mcp.StateRestarting:
		return MCPRestarting
	}
	return MCPStopped
}

// closeMCP stops the MCP servers: they get wait to exit after SIGTERM
// (bounded by the manager's own grace) and a second more to be killed;
// like the plugins' stop, this is not cut short with ctx, which would
// leave processes behind.
func (e *Executor) closeMCP(ctx context.Context, wait time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait+time.Second)
	defer cancel()
	if err := e.mcp.Close(ctx); err != nil {
		e.log.Warn("stop MCP servers", "error", err)
	}
}
