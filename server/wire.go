package server

import (
	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/executor"
)

// The executor's plain values on the native API's wire: one file, so a
// change on either side is one change here (as errors.go is for errors).

// outputChunk is an output read as GET .../output answers it.
func outputChunk(ch executor.OutputChunk) api.OutputChunk {
	return api.OutputChunk{Offset: ch.Offset, NextOffset: ch.NextOffset, Lost: ch.Lost, Data: ch.Data,
		Tail: ch.Tail, Done: ch.Done, ExitCode: ch.ExitCode}
}

// commandInfo is a command's state as the session routes and the stream's
// exit event send it.
func commandInfo(c executor.CommandInfo) api.Command {
	out := api.Command{ID: c.ID, Session: c.Session, Command: c.Command, Running: c.Running, ExitCode: c.ExitCode,
		ShellDied: c.ShellDied, Started: c.Started, Finished: c.Finished,
		Output: api.OutputRange{Start: c.Output.Start, End: c.Output.End}}
	if m := c.Metadata; m != nil {
		out.Metadata = &api.CommandMeta{ExitCode: m.ExitCode, PID: m.PID, Username: m.Username, Hostname: m.Hostname,
			WorkingDir: m.WorkingDir, PyInterpreterPath: m.PyInterpreterPath}
	}
	return out
}

// sessionInfo is a named session as the session routes send it.
func sessionInfo(si executor.SessionInfo) api.Session {
	out := api.Session{ID: si.ID, Cwd: si.Cwd, Started: si.Started, PID: si.PID}
	if c := si.RunningCommand; c != nil {
		out.RunningCommand = &api.CommandBrief{ID: c.ID, Command: c.Command, Started: c.Started}
	}
	return out
}

// watchEvent is a file-system change as a "data:" line of GET /watch
// carries it.
func watchEvent(ev executor.WatchEvent) api.WatchEvent {
	return api.WatchEvent{Path: ev.Path, Op: watchOps[ev.Op], IsDir: ev.IsDir, Time: ev.Time}
}

// watchOps names the executor's watch operations on the wire.
var watchOps = map[executor.WatchOp]string{
	executor.WatchCreate: api.OpCreate,
	executor.WatchWrite:  api.OpWrite,
	executor.WatchRemove: api.OpRemove,
	executor.WatchRename: api.OpRename,
	executor.WatchChmod:  api.OpChmod,
	executor.WatchLimit:  api.OpLimit,
}

// mcpServers is the MCP servers' states as /server_info lists them; never
// null.
func mcpServers(sts []executor.MCPServerStatus) []api.MCPServerStatus {
	out := make([]api.MCPServerStatus, len(sts))
	for i, st := range sts {
		out[i] = api.MCPServerStatus{Name: st.Name, Command: st.Command, State: mcpStateNames[st.State],
			PID: st.PID, Tools: st.Tools, Calls: st.Calls, Restarts: st.Restarts, Error: st.Error}
	}
	return out
}

// mcpStateNames names the executor's MCP server states on the wire.
var mcpStateNames = map[executor.MCPState]api.MCPServerState{
	executor.MCPStarting:   api.MCPStarting,
	executor.MCPRunning:    api.MCPRunning,
	executor.MCPRestarting: api.MCPRestarting,
	executor.MCPStopped:    api.MCPStopped,
}
