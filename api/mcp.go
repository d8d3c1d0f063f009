package api

// MCPServerState is a stdio MCP server's state in /server_info.
type MCPServerState string

// The states of a stdio MCP server.
const (
	MCPStarting   MCPServerState = "starting"
	MCPRunning    MCPServerState = "running"
	MCPRestarting MCPServerState = "restarting" // died or failed to start; tried again after a backoff
	MCPStopped    MCPServerState = "stopped"
)

// MCPServerStatus is one stdio MCP server behind the /mcp/sse proxy.
type MCPServerStatus struct {
	Name    string         `json:"name"`
	Command string         `json:"command"`
	State   MCPServerState `json:"state"`
	// PID of the running process (absent when none).
	PID int `json:"pid,omitempty"`
	// Tools is how many tools it offers.
	Tools int `json:"tools"`
	// Calls is how many forwarded calls are in flight.
	Calls int `json:"calls"`
	// Restarts counts the starts after the first.
	Restarts int `json:"restarts"`
	// Error is why the last start failed or the last run ended.
	Error string `json:"error,omitempty"`
}
