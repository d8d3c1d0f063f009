package server

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/executor"
)

func TestOutputChunk_CarriesEveryFieldToTheWire(t *testing.T) {
	code := 3
	tests := []struct {
		name string
		in   executor.OutputChunk
		want string
	}{
		{"running", executor.OutputChunk{Offset: 5, NextOffset: 9, Lost: 5, Data: "abcd", Tail: "$ "},
			`{"offset":5,"next_offset":9,"lost":5,"data":"abcd","tail":"$ ","done":false,"exit_code":null}`},
		{"done", executor.OutputChunk{Offset: 9, NextOffset: 9, Done: true, ExitCode: &code},
			`{"offset":9,"next_offset":9,"lost":0,"data":"","tail":"","done":true,"exit_code":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(outputChunk(tt.in))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
		})
	}
}

func TestCommandInfo_CarriesEveryFieldToTheWire(t *testing.T) {
	code := 2
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	finished := started.Add(time.Second)
	tests := []struct {
		name string
		in   executor.CommandInfo
		want string
	}{
		{"running", executor.CommandInfo{ID: 1, Session: "s", Command: "sleep 9", Running: true, Started: started,
			Output: executor.OutputRange{Start: 3, End: 7}},
			`{"id":1,"session":"s","command":"sleep 9","running":true,"exit_code":null,"shell_died":false,
			"started":"2026-01-02T03:04:05Z","finished":null,"metadata":null,"output":{"start":3,"end":7}}`},
		{"finished", executor.CommandInfo{ID: 2, Session: "s", Command: "false", ExitCode: &code, ShellDied: true,
			Started: started, Finished: &finished, Metadata: &executor.CommandMeta{ExitCode: 2, PID: 42, Username: "u",
				Hostname: "h", WorkingDir: "/w", PyInterpreterPath: "/p"}},
			`{"id":2,"session":"s","command":"false","running":false,"exit_code":2,"shell_died":true,
			"started":"2026-01-02T03:04:05Z","finished":"2026-01-02T03:04:06Z","metadata":{"exit_code":2,"pid":42,
			"username":"u","hostname":"h","working_dir":"/w","py_interpreter_path":"/p"},"output":{"start":0,"end":0}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(commandInfo(tt.in))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
		})
	}
}

func TestSessionInfo_CarriesEveryFieldToTheWire(t *testing.T) {
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		in   executor.SessionInfo
		want string
	}{
		{"idle", executor.SessionInfo{ID: "w", Cwd: "/w", Started: started, PID: 7},
			`{"id":"w","cwd":"/w","started":"2026-01-02T03:04:05Z","pid":7,"running_command":null}`},
		{"running", executor.SessionInfo{ID: "w", Cwd: "/w", Started: started, PID: 7,
			RunningCommand: &executor.CommandBrief{ID: 3, Command: "sleep 9", Started: started}},
			`{"id":"w","cwd":"/w","started":"2026-01-02T03:04:05Z","pid":7,
			"running_command":{"id":3,"command":"sleep 9","started":"2026-01-02T03:04:05Z"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(sessionInfo(tt.in))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
		})
	}
}

func TestWatchEvent_NamesEveryOpAsTheWireDoes(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		op   executor.WatchOp
		want string
	}{
		{executor.WatchCreate, api.OpCreate},
		{executor.WatchWrite, api.OpWrite},
		{executor.WatchRemove, api.OpRemove},
		{executor.WatchRename, api.OpRename},
		{executor.WatchChmod, api.OpChmod},
		{executor.WatchLimit, api.OpLimit},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			b, err := json.Marshal(watchEvent(executor.WatchEvent{Path: "/w/a", Op: tt.op, IsDir: true, Time: at}))
			require.NoError(t, err)
			assert.JSONEq(t, `{"path":"/w/a","op":"`+tt.want+`","is_dir":true,"time":"2026-01-02T03:04:05Z"}`, string(b))
		})
	}
}

func TestMCPServers_AsServerInfoListsThem(t *testing.T) {
	tests := []struct {
		name string
		in   []executor.MCPServerStatus
		want string
	}{
		{"none is an empty list", nil, `[]`},
		{"each state by its name", []executor.MCPServerStatus{
			{Name: "a", Command: "x", State: executor.MCPStarting},
			{Name: "b", Command: "x", State: executor.MCPRunning, PID: 9, Tools: 2, Calls: 1},
			{Name: "c", Command: "x", State: executor.MCPRestarting, Restarts: 3, Error: "exit 1"},
			{Name: "d", Command: "x", State: executor.MCPStopped},
		}, `[{"name":"a","command":"x","state":"starting","tools":0,"calls":0,"restarts":0},
			{"name":"b","command":"x","state":"running","pid":9,"tools":2,"calls":1,"restarts":0},
			{"name":"c","command":"x","state":"restarting","tools":0,"calls":0,"restarts":3,"error":"exit 1"},
			{"name":"d","command":"x","state":"stopped","tools":0,"calls":0,"restarts":0}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(mcpServers(tt.in))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
		})
	}
}
