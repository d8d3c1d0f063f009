package event

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, append(got, '\n'), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing; run go test -update")
	assert.Equal(t, string(want[:len(want)-1]), string(got))
}

func TestEncodeObservation_Golden(t *testing.T) {
	cases := []struct {
		name string
		obs  Observation
	}{
		{"run", &CmdOutput{Content: "hi", Command: "echo hi", Metadata: CmdMetadata{
			ExitCode: 0, PID: -1, Username: StrPtr("openhands"), Hostname: StrPtr("a1b2c3"),
			WorkingDir: StrPtr("/workspace"), PyInterpreterPath: StrPtr("/usr/bin/python"),
			Suffix: "\n[The command completed with exit code 0.]"}}},
		{"run_timeout", &CmdOutput{Content: "1", Command: "for i in 1 2; do echo $i; sleep 3; done",
			Metadata: CmdMetadata{ExitCode: -1, PID: -1, Suffix: "\n[The command timed out after 2.5 seconds.]"}}},
		{"run_ipython", &IPythonOutput{Content: "2", Code: "1+1"}},
		{"run_ipython_images", &IPythonOutput{Content: "", Code: "show()", ImageURLs: []string{"data:image/png;base64,AA=="}}},
		{"read", &FileReadResult{Content: "echo \"Hello, World!\"\n", Path: "/workspace/hello.sh"}},
		{"read_oh_aci", &FileReadResult{Content: "ERROR:\nx", Path: "a.txt", ImplSource: ImplOHACI}},
		{"write", &FileWriteResult{Path: "/workspace/a.txt"}},
		{"edit", &FileEditResult{Content: "File created successfully at: /w/a", Path: "/w/a",
			NewContent: StrPtr("x <b> & y"), Diff: StrPtr("--- /w/a\n+++ /w/a")}},
		{"error", &ErrorObservation{Content: "Browser functionality is not supported or disabled."}},
		{"browse", &BrowserOutput{Content: "[Current URL: http://x/]\n", URL: "http://x/", TriggerByAction: "browse",
			LastBrowserAction: `goto("http://x/")`, ActivePageIndex: 0, OpenPagesURLs: []string{"http://x/"}}},
		{"download", &FileDownload{Content: "done", FilePath: "/workspace/file_0.pdf"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := EncodeObservation(tc.obs)
			require.NoError(t, err)
			golden(t, "obs_"+tc.name, b)

			back, err := DecodeObservation(b)
			require.NoError(t, err)
			again, err := EncodeObservation(back)
			require.NoError(t, err)
			assert.JSONEq(t, string(b), string(again), "decode(encode(x)) must round-trip")
		})
	}
}

func TestEncodeObservation_OnlyDocumentedExtras(t *testing.T) {
	want := map[string][]string{
		ObsRun:        {"command", "metadata", "hidden"},
		ObsRunIPython: {"code", "image_urls"},
		ObsRead:       {"path", "impl_source"},
		ObsWrite:      {"path"},
		ObsEdit:       {"path", "prev_exist", "old_content", "new_content", "impl_source", "diff", "_diff_cache"},
		ObsError:      {"error_id"},
		ObsBrowse: {"url", "trigger_by_action", "screenshot", "screenshot_path", "set_of_marks", "error",
			"goal_image_urls", "open_pages_urls", "active_page_index", "dom_object", "axtree_object",
			"extra_element_properties", "last_browser_action", "last_browser_action_error",
			"focused_element_bid", "filter_visible_only"},
		ObsDownload: {"file_path"},
	}
	for _, o := range []Observation{&CmdOutput{}, &IPythonOutput{}, &FileReadResult{}, &FileWriteResult{},
		&FileEditResult{}, &ErrorObservation{}, &BrowserOutput{}, &FileDownload{}} {
		b, err := EncodeObservation(o)
		require.NoError(t, err)
		var env map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &env))
		var ex map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(env["extras"], &ex))
		keys := make([]string, 0, len(ex))
		for k := range ex {
			keys = append(keys, k)
		}
		assert.ElementsMatch(t, want[o.Type()], keys, o.Type())
		_, hasSuccess := env["success"]
		assert.Equal(t, o.Type() == ObsRun || o.Type() == ObsRunIPython, hasSuccess, "success key for %s", o.Type())
	}
}

func TestCmdOutput_SuccessFollowsExitCode(t *testing.T) {
	for _, tc := range []struct {
		exit int
		want bool
	}{{0, true}, {1, false}, {-1, false}, {130, false}} {
		b, err := EncodeObservation(&CmdOutput{Metadata: CmdMetadata{ExitCode: tc.exit, PID: -1}})
		require.NoError(t, err)
		var env struct{ Success bool }
		require.NoError(t, json.Unmarshal(b, &env))
		assert.Equal(t, tc.want, env.Success, "exit %d", tc.exit)
	}
}

func TestDecodeAction_HostDefaults(t *testing.T) {
	a, err := DecodeAction([]byte(`{"action":"run","args":{"command":"ls"}}`))
	require.NoError(t, err)
	run := a.(*CmdRun)
	assert.Equal(t, "ls", run.Command)
	assert.False(t, run.IsInput)
	assert.False(t, run.Blocking)
	assert.Nil(t, run.Cwd)
	assert.Equal(t, "confirmed", run.ConfirmationState)
	assert.Equal(t, RiskUnknown, run.SecurityRisk)
	assert.Nil(t, run.Timeout)
	assert.Zero(t, run.HardTimeout())

	a, err = DecodeAction([]byte(`{"action":"read","args":{"path":"a"}}`))
	require.NoError(t, err)
	read := a.(*FileRead)
	assert.Equal(t, 0, read.Start)
	assert.Equal(t, -1, read.End)
	assert.Equal(t, ImplDefault, read.ImplSource)
	assert.Nil(t, read.ViewRange)

	a, err = DecodeAction([]byte(`{"action":"edit","args":{"path":"/a","command":"view"}}`))
	require.NoError(t, err)
	edit := a.(*FileEdit)
	assert.Equal(t, ImplOHACI, edit.ImplSource)
	assert.Equal(t, 1, edit.Start)
	assert.Nil(t, edit.FileText)
	assert.Nil(t, edit.InsertLine)

	a, err = DecodeAction([]byte(`{"action":"run_ipython","args":{"code":"1"}}`))
	require.NoError(t, err)
	assert.True(t, a.(*IPythonRunCell).IncludeExtra)
}

func TestDecodeAction_FullHostPayload(t *testing.T) {
	// What the host's event_to_dict sends for a CmdRunAction with a timeout.
	payload := `{"id": 12, "timestamp": "2025-11-28T10:00:00.123456", "source": "agent",
	  "message": "Running command: sleep 1", "action": "run",
	  "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": "t1"},
	  "args": {"command": "sleep 1", "is_input": false, "thought": "", "blocking": true,
	           "is_static": false, "cwd": null, "hidden": true, "confirmation_state": "confirmed",
	           "security_risk": 1, "future_key": {"x": 1}},
	  "timeout": 2.5}`
	a, err := DecodeAction([]byte(payload))
	require.NoError(t, err)
	run := a.(*CmdRun)
	assert.Equal(t, "sleep 1", run.Command)
	assert.True(t, run.Blocking)
	assert.True(t, run.Hidden)
	assert.Equal(t, Risk(1), run.SecurityRisk)
	require.NotNil(t, run.ID)
	assert.EqualValues(t, 12, *run.ID)
	require.NotNil(t, run.Timeout)
	assert.Equal(t, 2.5, *run.Timeout)
	assert.Equal(t, "2.5s", run.HardTimeout().String())
}

func TestDecodeAction_Errors(t *testing.T) {
	cases := []struct {
		name, payload, want string
	}{
		{"not json", `{`, "decode action"},
		{"no action key", `{"args":{}}`, "'action' key is missing"},
		{"unknown type", `{"action":"teleport","args":{}}`, `unknown action type "teleport"`},
		{"host-only type", `{"action":"think","args":{"thought":"x"}}`, "not executed by the action server"},
		{"missing command", `{"action":"run","args":{}}`, `argument "command" is required`},
		{"null path", `{"action":"read","args":{"path":null}}`, `argument "path" is required`},
		{"wrong type", `{"action":"run","args":{"command":5}}`, "decode run action args"},
		{"args not object", `{"action":"run","args":[1]}`, "decode run action args"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeAction([]byte(tc.payload))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestDecodeAction_LenientFields(t *testing.T) {
	a, err := DecodeAction([]byte(`{"action":"run","args":{"command":"x","security_risk":"HIGH"}}`))
	require.NoError(t, err)
	assert.Equal(t, RiskUnknown, a.(*CmdRun).SecurityRisk, "invalid risk is dropped, not fatal")

	for _, tc := range []struct {
		raw    string
		n      int
		ok     bool
		quoted bool
	}{{`3`, 3, true, false}, {`"7"`, 7, true, true}, {`"abc"`, 0, false, true}} {
		a, err := DecodeAction([]byte(`{"action":"edit","args":{"path":"/a","command":"insert","insert_line":` + tc.raw + `}}`))
		require.NoError(t, err)
		il := a.(*FileEdit).InsertLine
		require.NotNil(t, il)
		n, ok := il.Int()
		assert.Equal(t, tc.ok, ok, tc.raw)
		assert.Equal(t, tc.quoted, il.Quoted, tc.raw)
		if ok {
			assert.Equal(t, tc.n, n)
		}
	}
}

func TestEncodeAction_RoundTrip(t *testing.T) {
	timeout := 120.0
	run := NewCmdRun("echo hi")
	run.Timeout = &timeout
	b, err := EncodeAction(run)
	require.NoError(t, err)
	golden(t, "action_run", b)

	back, err := DecodeAction(b)
	require.NoError(t, err)
	assert.Equal(t, run, back)
}

// TestAction_Golden checks every executable action type against the form
// the host sends: every key, defaults shown (contract §4.2). The golden
// files are written from the contract, not generated. Encoding gives
// exactly that form, and decoding it, or only its required keys, gives the
// same action, so a default that drifts from the host's fails here.
func TestAction_Golden(t *testing.T) {
	timeout := 120.0
	h := Header{Timeout: &timeout}
	fileText := "print(1)\n"
	cases := []struct {
		name    string
		minimal string // only the required args
		want    Action
	}{
		{"run_ipython", `{"code": "print(1)"}`, &IPythonRunCell{Header: h, Code: "print(1)",
			IncludeExtra: true, ConfirmationState: "confirmed", SecurityRisk: RiskUnknown}},
		{"read", `{"path": "/workspace/a.txt"}`, &FileRead{Header: h, Path: "/workspace/a.txt",
			Start: 0, End: -1, SecurityRisk: RiskUnknown, ImplSource: ImplDefault}},
		{"write", `{"path": "/workspace/a.txt", "content": "hello\n"}`, &FileWrite{Header: h, Path: "/workspace/a.txt",
			Content: "hello\n", Start: 0, End: -1, SecurityRisk: RiskUnknown}},
		{"edit", `{"path": "/workspace/a.py", "command": "create", "file_text": "print(1)\n"}`, &FileEdit{Header: h,
			Path: "/workspace/a.py", Command: "create", FileText: &fileText, Start: 1, End: -1,
			SecurityRisk: RiskUnknown, ImplSource: ImplOHACI}},
		{"browse", `{"url": "http://localhost:3000/"}`, &BrowseURL{Header: h, URL: "http://localhost:3000/",
			SecurityRisk: RiskUnknown}},
		{"browse_interactive", `{"browser_actions": "click(\"12\")"}`, &BrowseInteractive{Header: h,
			BrowserActions: `click("12")`, SecurityRisk: RiskUnknown}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := EncodeAction(tc.want)
			require.NoError(t, err)
			golden(t, "action_"+tc.name, b)

			full, err := os.ReadFile(filepath.Join("testdata", "action_"+tc.name+".golden.json"))
			require.NoError(t, err)
			got, err := DecodeAction(full)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, "the host's full form")

			got, err = DecodeAction([]byte(`{"action": "` + tc.name + `", "args": ` + tc.minimal + `, "timeout": 120}`))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got, "missing args take the host's defaults")
		})
	}
}
