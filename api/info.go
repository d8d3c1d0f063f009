package api

// ServerInfo is the /server_info response.
type ServerInfo struct {
	// Uptime and IdleTime are in seconds.
	Uptime    float64   `json:"uptime"`
	IdleTime  float64   `json:"idle_time"`
	Resources Resources `json:"resources"`
	// Plugins are the plugins' states, also while they start (an addition
	// to upstream's report; [] when none).
	Plugins []PluginStatus `json:"plugins"`
	// MCPServers are the stdio MCP servers behind /mcp/sse (an addition
	// to upstream's report; [] when none).
	MCPServers []MCPServerStatus `json:"mcp_servers"`
	// Runtime counts what a leak would grow (an addition to upstream's
	// report).
	Runtime RuntimeStats `json:"runtime"`
	// Shell is the state of the default shell, which serves "run"
	// actions (an addition to upstream's report).
	Shell ShellStatus `json:"shell"`
}

// ShellStatus is the state of the default shell.
type ShellStatus struct {
	// State is "starting", "ready" or "failed".
	State string `json:"state"`
	// Error says why the last start failed: while State is "failed", and
	// while a new start is under way after a failure.
	Error string `json:"error,omitempty"`
}

// States of the default shell.
const (
	ShellStarting = "starting"
	ShellReady    = "ready"
	ShellFailed   = "failed"
)

// RuntimeStats are the server's goroutines, open file descriptors and
// direct child processes.
type RuntimeStats struct {
	Goroutines int `json:"goroutines"`
	OpenFDs    int `json:"open_fds"`
	Children   int `json:"children"`
}

// Resources is the server process's resource usage, in the shape upstream
// reports.
type Resources struct {
	CPUPercent float64     `json:"cpu_percent"`
	Memory     MemoryUsage `json:"memory"`
	Disk       DiskUsage   `json:"disk"`
	IO         IOUsage     `json:"io"`
}

// MemoryUsage of the server process, in bytes.
type MemoryUsage struct {
	RSS     int64   `json:"rss"`
	VMS     int64   `json:"vms"`
	Percent float64 `json:"percent"`
}

// DiskUsage of the root file system, in bytes.
type DiskUsage struct {
	Total   int64   `json:"total"`
	Used    int64   `json:"used"`
	Free    int64   `json:"free"`
	Percent float64 `json:"percent"`
}

// IOUsage of the server process, in bytes.
type IOUsage struct {
	ReadBytes  int64 `json:"read_bytes"`
	WriteBytes int64 `json:"write_bytes"`
}

// PluginState is where a plugin is in its life.
type PluginState string

// Plugin states.
const (
	PluginStarting   PluginState = "starting"
	PluginReady      PluginState = "ready"
	PluginFailed     PluginState = "failed"
	PluginDisabled   PluginState = "disabled"   // cannot run here; Error says why
	PluginRestarting PluginState = "restarting" // its process died; being restarted
)

// PluginStatus is a plugin's state as /server_info reports it.
type PluginStatus struct {
	Name  string      `json:"name"`
	State PluginState `json:"state"`
	// Error says why the plugin failed, is disabled or is restarting.
	Error string `json:"error,omitempty"`
	// Port is the loopback port of the plugin's own server, if any.
	Port int `json:"port,omitempty"`
}
