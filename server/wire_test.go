package server

import (
	"encoding/json"
	"io/fs"
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

func TestFileInfo_CarriesEveryFieldToTheWire(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		in   executor.FileEntry
		want string
	}{
		{"file", executor.FileEntry{Name: "f", Path: "d/f", Type: executor.FileRegular, Size: 12, Mode: 0o644,
			Modified: at, UID: 1000, GID: 1001},
			`{"name":"f","path":"d/f","type":"file","size":12,"mode":"0644","modified":"2026-01-02T03:04:05Z",
			"uid":1000,"gid":1001}`},
		{"dir with set-id and sticky bits", executor.FileEntry{Name: "d", Path: "d", Type: executor.FileDir,
			Mode: 0o755 | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky, Modified: at},
			`{"name":"d","path":"d","type":"dir","size":0,"mode":"7755","modified":"2026-01-02T03:04:05Z",
			"uid":0,"gid":0}`},
		{"symlink", executor.FileEntry{Name: "l", Path: "l", Type: executor.FileSymlink, Size: 4, Mode: 0o777,
			Modified: at, Target: "/etc"},
			`{"name":"l","path":"l","type":"symlink","size":4,"mode":"0777","modified":"2026-01-02T03:04:05Z",
			"uid":0,"gid":0,"target":"/etc"}`},
		{"other", executor.FileEntry{Name: "p", Path: "p", Type: executor.FileOther, Mode: 0o600, Modified: at},
			`{"name":"p","path":"p","type":"other","size":0,"mode":"0600","modified":"2026-01-02T03:04:05Z",
			"uid":0,"gid":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(fileInfo(tt.in))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
		})
	}
}

func TestFileList_EmptyIsAnEmptyList(t *testing.T) {
	b, err := json.Marshal(fileList("d", nil))
	require.NoError(t, err)
	assert.JSONEq(t, `{"path":"d","entries":[]}`, string(b))
}

func TestFileWritten_CarriesEveryFieldToTheWire(t *testing.T) {
	b, err := json.Marshal(fileWritten("d/f", executor.FileWritten{Bytes: 5, Size: 12}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"path":"d/f","bytes":5,"size":12}`, string(b))
}

func TestPluginStatuses_AsServerInfoListsThem(t *testing.T) {
	tests := []struct {
		name string
		in   []executor.PluginStatus
		want string
	}{
		{"none is an empty list", nil, `[]`},
		{"each state by its name", []executor.PluginStatus{
			{Name: "a", State: executor.PluginStarting},
			{Name: "b", State: executor.PluginReady, Port: 8001},
			{Name: "c", State: executor.PluginFailed, Error: "exit 1"},
			{Name: "d", State: executor.PluginDisabled, Error: "no display"},
			{Name: "e", State: executor.PluginRestarting, Error: "died"},
		}, `[{"name":"a","state":"starting"},{"name":"b","state":"ready","port":8001},
			{"name":"c","state":"failed","error":"exit 1"},{"name":"d","state":"disabled","error":"no display"},
			{"name":"e","state":"restarting","error":"died"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(pluginStatuses(tt.in))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
		})
	}
}

func TestShellStatus_NamesEveryStateAsTheWireDoes(t *testing.T) {
	tests := []struct {
		in   executor.ShellStatus
		want string
	}{
		{executor.ShellStatus{State: executor.ShellStarting}, `{"state":"starting"}`},
		{executor.ShellStatus{State: executor.ShellReady}, `{"state":"ready"}`},
		{executor.ShellStatus{State: executor.ShellFailed, Error: "rc hangs"}, `{"state":"failed","error":"rc hangs"}`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			b, err := json.Marshal(shellStatus(tt.in))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
		})
	}
}
