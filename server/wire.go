package server

import (
	"fmt"
	"io/fs"

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

// fileInfo is a file-system entry as GET /files/stat and each entry of
// GET /files/list send it.
func fileInfo(en executor.FileEntry) api.FileInfo {
	return api.FileInfo{Name: en.Name, Path: en.Path, Type: fileTypes[en.Type], Size: en.Size,
		Mode: fileMode(en.Mode), Modified: en.Modified, UID: en.UID, GID: en.GID, Target: en.Target}
}

// fileTypes names the executor's file types on the wire.
var fileTypes = map[executor.FileType]string{
	executor.FileRegular: api.FileTypeFile,
	executor.FileDir:     api.FileTypeDir,
	executor.FileSymlink: api.FileTypeSymlink,
	executor.FileOther:   api.FileTypeOther,
}

// fileMode is a mode as the wire writes it: the permission and set-id
// bits in octal, as chmod takes them ("0644", "4755").
func fileMode(m fs.FileMode) string {
	mode := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return fmt.Sprintf("%04o", mode)
}

// fileList is a directory's entries as GET /files/list answers them;
// entries never null.
func fileList(path string, entries []executor.FileEntry) api.FileList {
	out := api.FileList{Path: path, Entries: make([]api.FileInfo, len(entries))}
	for i, en := range entries {
		out.Entries[i] = fileInfo(en)
	}
	return out
}

// fileWritten is a write as PUT /files/content answers it.
func fileWritten(path string, w executor.FileWritten) api.FileWritten {
	return api.FileWritten{Path: path, Bytes: w.Bytes, Size: w.Size}
}

// pluginStatuses is the plugins' states as /server_info lists them; never
// null.
func pluginStatuses(sts []executor.PluginStatus) []api.PluginStatus {
	out := make([]api.PluginStatus, len(sts))
	for i, st := range sts {
		out[i] = api.PluginStatus{Name: st.Name, State: pluginStateNames[st.State], Error: st.Error, Port: st.Port}
	}
	return out
}

// pluginStateNames names the executor's plugin states on the wire.
var pluginStateNames = map[executor.PluginState]api.PluginState{
	executor.PluginStarting:   api.PluginStarting,
	executor.PluginReady:      api.PluginReady,
	executor.PluginFailed:     api.PluginFailed,
	executor.PluginDisabled:   api.PluginDisabled,
	executor.PluginRestarting: api.PluginRestarting,
}

// shellStatus is the default shell's state as /server_info reports it.
func shellStatus(st executor.ShellStatus) api.ShellStatus {
	return api.ShellStatus{State: shellStateNames[st.State], Error: st.Error}
}

// shellStateNames names the executor's default shell states on the wire.
var shellStateNames = map[executor.ShellState]string{
	executor.ShellStarting: api.ShellStarting,
	executor.ShellReady:    api.ShellReady,
	executor.ShellFailed:   api.ShellFailed,
}
