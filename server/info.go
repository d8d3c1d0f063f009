package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/plugins"
)

// alive is the readiness probe: 200 only once actions can run.
func (s *Server) alive(c *gin.Context) {
	if s.exec.Load() == nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "not initialized"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

// ServerInfo is the /server_info response.
type ServerInfo struct {
	Uptime    float64   `json:"uptime"`
	IdleTime  float64   `json:"idle_time"`
	Resources Resources `json:"resources"`
	// Plugins are the plugins' states, also while they start (an addition
	// to upstream's report; [] when none).
	Plugins []plugins.Status `json:"plugins"`
	// Runtime counts what a leak would grow (an addition to upstream's
	// report).
	Runtime RuntimeStats `json:"runtime"`
}

// RuntimeStats are the server's goroutines, open file descriptors and
// direct child processes.
type RuntimeStats struct {
	Goroutines int `json:"goroutines"`
	OpenFDs    int `json:"open_fds"`
	Children   int `json:"children"`
}

// Resources is the process's resource usage, in the shape upstream reports.
type Resources struct {
	CPUPercent float64     `json:"cpu_percent"`
	Memory     MemoryUsage `json:"memory"`
	Disk       DiskUsage   `json:"disk"`
	IO         IOUsage     `json:"io"`
}

// MemoryUsage of the server process.
type MemoryUsage struct {
	RSS     int64   `json:"rss"`
	VMS     int64   `json:"vms"`
	Percent float64 `json:"percent"`
}

// DiskUsage of the root file system.
type DiskUsage struct {
	Total   int64   `json:"total"`
	Used    int64   `json:"used"`
	Free    int64   `json:"free"`
	Percent float64 `json:"percent"`
}

// IOUsage of the server process.
type IOUsage struct {
	ReadBytes  int64 `json:"read_bytes"`
	WriteBytes int64 `json:"write_bytes"`
}

// serverInfo reports uptime, idle time and resources. It never waits for
// actions, so it answers while a command runs.
func (s *Server) serverInfo(c *gin.Context) {
	info := ServerInfo{Resources: s.resources(), Plugins: []plugins.Status{}, Runtime: runtimeStats()}
	if e := s.exec.Load(); e != nil {
		info.Uptime = e.Uptime().Seconds()
		info.IdleTime = e.IdleTime().Seconds()
		info.Plugins = e.Plugins().Statuses()
	} else {
		// Still starting: nothing has run, so idle equals uptime.
		info.Uptime = sinceSeconds(s.started)
		info.IdleTime = info.Uptime
		info.Plugins = s.starting.Load().Statuses()
	}
	c.JSON(http.StatusOK, info)
}

// tokenHolder is what the vscode plugin offers the token route.
type tokenHolder interface {
	Token() *string
}

// vscodeToken returns the VS Code server's connection token, or null when
// the plugin is not loaded or is disabled.
func (s *Server) vscodeToken(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	var token *string
	if p, ok := e.Plugins().Get("vscode"); ok {
		if th, ok := p.(tokenHolder); ok {
			token = th.Token()
		}
	}
	c.JSON(http.StatusOK, gin.H{"token": token})
}
