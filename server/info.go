package server

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
)

// alive is the readiness probe: 200 only once actions can be taken (an
// executor whose default shell is still starting holds the actions that
// need it until it is up).
//
// A probe that comes while the server is about to be ready is held for up
// to aliveHold rather than sent away: without plugins that is a millisecond
// away, and a host polling every few seconds would otherwise lose a whole
// interval to it.
func (s *Server) alive(c *gin.Context) {
	if _, claimed := s.keys.load(); !claimed {
		// Late binding: no action can run before the claim.
		c.JSON(http.StatusServiceUnavailable, api.Status{Status: "not initialized"})
		return
	}
	if s.exec.Load() == nil {
		t := time.NewTimer(aliveHold)
		defer t.Stop()
		if s.aliveHeld != nil {
			s.aliveHeld()
		}
		select {
		case <-s.ready:
		case <-t.C:
		case <-c.Request.Context().Done():
		}
	}
	if s.exec.Load() == nil {
		c.JSON(http.StatusServiceUnavailable, api.Status{Status: "not initialized"})
		return
	}
	c.JSON(http.StatusOK, api.Status{Status: "ok"})
}

// aliveHold is how long /alive waits for readiness before it answers 503;
// well within the probe timeouts of hosts (5 s) and of Kubernetes (1 s).
const aliveHold = 250 * time.Millisecond

// serverInfo reports uptime, idle time and resources. It never waits for
// actions, so it answers while a command runs.
func (s *Server) serverInfo(c *gin.Context) {
	info := api.ServerInfo{Resources: s.resources(), Plugins: []api.PluginStatus{},
		MCPServers: []api.MCPServerStatus{}, Runtime: runtimeStats()}
	if e := s.exec.Load(); e != nil {
		info.Uptime = e.Uptime().Seconds()
		info.IdleTime = e.IdleTime().Seconds()
		info.Plugins = pluginStatuses(e.PluginStatuses())
		info.MCPServers = mcpServers(e.MCPServers())
		info.Shell = shellStatus(e.ShellStatus())
	} else {
		info.Shell = api.ShellStatus{State: api.ShellStarting}
		// Still starting: nothing has run, so idle equals uptime.
		info.Uptime = sinceSeconds(s.started)
		info.IdleTime = info.Uptime
		if starting := s.starting.Load(); starting != nil {
			info.Plugins = pluginStatuses((*starting)())
		}
	}
	c.JSON(http.StatusOK, info)
}

// vscodeToken returns the VS Code server's connection token, or null when
// the plugin is not loaded or is disabled.
func (s *Server) vscodeToken(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	c.JSON(http.StatusOK, gin.H{"token": e.VSCodeToken()})
}
