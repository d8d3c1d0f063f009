package executor

import (
	"maps"
	"slices"
)

// Stats are the counts a metrics scrape reports.
type Stats struct {
	// Sessions are the shell sessions open now, the default one included.
	Sessions int
	// CommandsStarted counts commands started since the executor started,
	// in every session, piped ones included.
	CommandsStarted int64
	// CommandsRunning are the terminal commands running now.
	CommandsRunning int
	// OutputBytes counts the output of finished commands, kept or not.
	OutputBytes int64
	// OutputKept is the finished commands' output the budget holds now.
	OutputKept int64
	// Plugins and MCPServers are their states, as /server_info shows them.
	Plugins    []PluginStatus
	MCPServers []MCPServerStatus
}

// Stats returns the executor's counts; it never waits for a command.
func (e *Executor) Stats() Stats {
	st := Stats{CommandsStarted: e.commands.Load(), Plugins: e.PluginStatuses(), MCPServers: e.MCPServers()}
	e.mu.Lock()
	sessions := slices.Collect(maps.Values(e.sessions))
	e.mu.Unlock()
	st.Sessions = len(sessions)
	for _, s := range sessions {
		if _, running := s.Running(); running {
			st.CommandsRunning++
		}
	}
	if b := e.opts.Shell.Budget; b != nil {
		st.OutputBytes, st.OutputKept = b.Produced(), b.Kept()
	}
	return st
}
