package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/event"
)

// post sends a raw body to /execute_action and returns status and JSON.
func post(t *testing.T, s *server, body string, header http.Header) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/execute_action", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	require.NoError(t, json.Unmarshal(data, &out), "body: %s", data)
	return resp.StatusCode, out
}

func TestRun_ThroughTheBinary(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)

	obs, err := s.Client.Run(ctx, "echo hello && pwd", client.RunOptions{Timeout: 10 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, "hello\n"+s.WorkDir, obs.Content)
	assert.Equal(t, 0, obs.Metadata.ExitCode)
	require.NotNil(t, obs.Metadata.WorkingDir)
	assert.Equal(t, s.WorkDir, *obs.Metadata.WorkingDir)
	assert.Equal(t, "\n[The command completed with exit code 0.]", obs.Metadata.Suffix)

	_, err = s.Client.Run(ctx, "ls\npwd", client.RunOptions{})
	var oe *client.ObservationError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, event.ObsError, oe.Observation.Type())
	assert.Contains(t, oe.Observation.Text(), "Cannot execute multiple commands at once")
}

// TestRun_HugeOutputKeepsServerMemoryBounded prints 256 MB, 32 times the
// per-command output buffer, through the binary: the server's peak resident
// memory grows by that buffer and a little more, not with the output.
func TestRun_HugeOutputKeepsServerMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 256 MB through a terminal")
	}
	const (
		outputBuffer = 8 << 20 // the default of --output-buffer
		line         = "some output line"
		lines        = 256 << 20 / (len(line) + 1)
	)
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	// Output of the same kind first: the code and buffers that handle it
	// the first time are not memory the output takes.
	_, err := s.Client.Run(ctx, fmt.Sprintf("yes '%s' | head -n 100000", line), client.RunOptions{})
	require.NoError(t, err)
	before := serverRSS(t, s)

	obs, err := s.Client.Run(ctx, fmt.Sprintf("yes '%s' | head -n %d", line, lines),
		client.RunOptions{Blocking: true, Timeout: 50 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, 0, obs.Metadata.ExitCode)
	assert.True(t, strings.HasSuffix(obs.Content, "\n"+line), "the output ends with the last line")
	assert.Equal(t, "[Previous command outputs are truncated. Showing the last 11000 lines of the output below.]\n", obs.Metadata.Prefix)

	growth := serverPeakRSS(t, s) - before
	t.Logf("server peak RSS grew by %.1f MB while printing %d MB", float64(growth)/(1<<20), lines*(len(line)+1)>>20)
	assert.Less(t, growth, int64(outputBuffer+4<<20), "peak growth within the output buffer and 4 MB")
}

func TestExecuteAction_WireFormat(t *testing.T) {
	s := startServer(t, startOpts{})
	status, out := post(t, s, `{"action": {"action": "run", "args": {"command": "echo wire", "is_input": false,
		"thought": "", "blocking": false, "is_static": false, "cwd": null, "hidden": false,
		"confirmation_state": "confirmed", "security_risk": -1}, "timeout": 120}}`, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "run", out["observation"])
	assert.Equal(t, "wire", out["content"])
	assert.Equal(t, true, out["success"])
	assert.Equal(t, "Command `echo wire` executed with exit code 0.", out["message"])
	extras := out["extras"].(map[string]any)
	assert.Equal(t, "echo wire", extras["command"])
	assert.Equal(t, false, extras["hidden"])
	meta := extras["metadata"].(map[string]any)
	for _, k := range []string{"exit_code", "pid", "username", "hostname", "working_dir", "py_interpreter_path", "prefix", "suffix"} {
		assert.Contains(t, meta, k)
	}

	// A hidden run that cannot run still answers with a run observation,
	// which the host requires for hidden actions.
	status, out = post(t, s, `{"action": {"action": "run", "args": {"command": "a\nb", "hidden": true}, "timeout": 5}}`, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "run", out["observation"])
}

func TestExecuteAction_ErrorEnvelopes(t *testing.T) {
	s := startServer(t, startOpts{})
	cases := []struct {
		name, body string
		status     int
		detail     string
	}{
		{"not json", `{`, http.StatusUnprocessableEntity, "Invalid request parameters"},
		{"no action", `{"x": 1}`, http.StatusUnprocessableEntity, "Invalid request parameters"},
		{"action not object", `{"action": 3}`, http.StatusUnprocessableEntity, "Invalid request parameters"},
		{"unknown type", `{"action": {"action": "fly"}}`, http.StatusInternalServerError, `Internal server error: decode action: unknown action type "fly"`},
		{"host-only type", `{"action": {"action": "message", "args": {"content": "hi"}}}`, http.StatusInternalServerError, "not executed by the action server"},
		{"ipython without jupyter", `{"action": {"action": "run_ipython", "args": {"code": "1"}}}`, http.StatusInternalServerError,
			"Internal server error: JupyterRequirement not found. Unable to run IPython action."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := post(t, s, tc.body, nil)
			assert.Equal(t, tc.status, status)
			assert.Contains(t, out["detail"], tc.detail)
		})
	}

	resp, err := http.Get(s.URL + "/no/such/route")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.JSONEq(t, `{"detail": "Not Found"}`, string(body))

	// The browser is disabled: the exact observation agents know.
	status, out := post(t, s, `{"action": {"action": "browse", "args": {"url": "http://127.0.0.1/"}}}`, nil)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "error", out["observation"])
	assert.Equal(t, "Browser functionality is not supported or disabled.", out["content"])
}

func TestAPIKey(t *testing.T) {
	const key = "s3cret-key-value"
	s := startServer(t, startOpts{apiKey: key})
	for _, tc := range []struct {
		name   string
		header http.Header
		status int
	}{
		{"missing", nil, http.StatusForbidden},
		{"wrong", http.Header{"X-Session-Api-Key": {"nope"}}, http.StatusForbidden},
		{"right", http.Header{"X-Session-Api-Key": {key}}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := post(t, s, `{"action": {"action": "run", "args": {"command": "true"}}}`, tc.header)
			assert.Equal(t, tc.status, status)
			if tc.status == http.StatusForbidden {
				assert.Equal(t, "Invalid API Key", out["detail"])
			}
		})
	}
	// Checked before routing: unknown paths are refused too.
	resp, err := http.Get(s.URL + "/no/such/route")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	// Near-misses of real routes are not redirected before the check: gin
	// would answer a redirect without running the middleware. Only the
	// exact open paths are open.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct{ method, path string }{
		{http.MethodPost, "/execute_action/"},
		{http.MethodGet, "/alive/"},
		{http.MethodGet, "/server_info/"},
		{http.MethodPost, "/Execute_Action"},
		{http.MethodGet, "/sessions/"},
	} {
		for _, withKey := range []bool{false, true} {
			req, err := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(`{"action": {"action": "run", "args": {"command": "true"}}}`))
			require.NoError(t, err)
			want, detail, code := http.StatusForbidden, "Invalid API Key", api.CodeUnauthorized
			if withKey {
				req.Header.Set(api.HeaderAPIKey, key)
				want, detail, code = http.StatusNotFound, "Not Found", api.CodeNotFound
			}
			resp, err := noRedirect.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, want, resp.StatusCode, "%s %s with key: %v", tc.method, tc.path, withKey)
			assert.JSONEq(t, refusal(tc.path, detail, code), string(body), "%s %s with key: %v", tc.method, tc.path, withKey)
		}
	}

	for _, open := range []string{"/alive", "/server_info"} {
		resp, err := http.Get(s.URL + open)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, open)
	}

	assert.ErrorIs(t, client.New(s.URL).Alive(ctxT(t)), nil)
	_, err = client.New(s.URL).Run(ctxT(t), "true", client.RunOptions{})
	assert.ErrorIs(t, err, client.ErrUnauthorized)

	// The key never reaches the logs, nor the shell's environment.
	obs, err := s.Client.Run(ctxT(t), "echo \"[$SESSION_API_KEY]\"", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "[]", obs.Content)
	assert.NotContains(t, s.logs.String(), key)
}

func TestClient_OpenAPIAndVSCodeToken(t *testing.T) {
	const key = "spec-key"
	s := startServer(t, startOpts{apiKey: key})
	ctx := ctxT(t)
	raw, err := s.Client.OpenAPI(ctx)
	require.NoError(t, err)
	var spec struct {
		OpenAPI string                     `json:"openapi"`
		Paths   map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(raw, &spec))
	assert.Equal(t, "3.1.0", spec.OpenAPI)
	assert.Contains(t, spec.Paths, "/execute_action")
	_, err = client.New(s.URL).OpenAPI(ctx)
	assert.ErrorIs(t, err, client.ErrUnauthorized, "the description is behind the key")

	// No vscode plugin: the token is null on the wire, "" here.
	token, err := s.Client.VSCodeToken(ctx)
	require.NoError(t, err)
	assert.Empty(t, token)
	_, err = client.New(s.URL).VSCodeToken(ctx)
	assert.ErrorIs(t, err, client.ErrUnauthorized)
}

func TestAlive_ReadyWhileShellStarts(t *testing.T) {
	home := t.TempDir()
	gate := filepath.Join(home, "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o600))
	// bash reads ~/.bashrc before its first prompt: it stays there until
	// the test writes to the FIFO.
	require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte(`read -r _ < "$HOME/gate"`+"\n"), 0o644))
	s := startServer(t, startOpts{env: []string{"HOME=" + home}})

	// Ready while bash is held: a run action is taken, and answered once
	// the shell is up, with nothing lost.
	type result struct {
		obs *event.CmdOutput
		err error
	}
	ran := make(chan result, 1)
	go func() {
		obs, err := s.Client.Run(context.Background(), "echo up; pwd", client.RunOptions{Timeout: 30 * time.Second})
		ran <- result{obs, err}
	}()
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("go\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	r := <-ran
	require.NoError(t, r.err)
	assert.Equal(t, "up\n"+s.WorkDir, r.obs.Content)
	assert.Equal(t, 0, r.obs.Metadata.ExitCode)
}

func TestStart_ShellThatCannotStartEndsTheServer(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte("exit 3\n"), 0o644))
	s := startServer(t, startOpts{noWait: true, env: []string{"HOME=" + home}})
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the server kept running without a shell")
	}
	assert.Equal(t, 1, s.cmd.ProcessState.ExitCode())
	assert.Contains(t, s.logs.String(), "start-up failed")
	assert.Contains(t, s.logs.String(), "bash exited during start-up with status 3")
}

func TestStatusRoutesAnswerWhileCommandRuns(t *testing.T) {
	s := startServer(t, startOpts{})
	done := make(chan error, 1)
	go func() {
		_, err := s.Client.Run(context.Background(), "sleep 3", client.RunOptions{Blocking: true})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		require.NoError(t, s.Client.Alive(ctx), "/alive must not queue behind the command")
		info, err := s.Client.ServerInfo(ctx)
		cancel()
		require.NoError(t, err)
		assert.Less(t, info.IdleTime, info.Uptime)
		assert.Positive(t, info.Resources.Memory.RSS)
	}
	select {
	case <-done:
		t.Fatal("the command finished before the status checks")
	default:
	}
	require.NoError(t, <-done)
}

func TestSIGTERM_EndsCommandsAndExitsPromptly(t *testing.T) {
	s := startServer(t, startOpts{})
	obs, err := s.Client.Run(ctxT(t), "sleep 300 & echo $!", client.RunOptions{})
	require.NoError(t, err)
	lines := strings.Split(obs.Content, "\n")
	bg, err := strconv.Atoi(lines[len(lines)-1])
	require.NoError(t, err)

	go s.Client.Run(context.Background(), "sleep 300", client.RunOptions{Blocking: true})
	time.Sleep(300 * time.Millisecond)

	start := time.Now()
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("server did not exit within 5 s of SIGTERM")
	}
	t.Logf("exited %v after SIGTERM", time.Since(start))
	assert.Eventually(t, func() bool { return syscall.Kill(bg, 0) != nil }, 2*time.Second, 20*time.Millisecond,
		"background job of the shell must end with the server")
}

func TestUserSetup_CreatesSandboxUser(t *testing.T) {
	const name, uid = testUser, testUID
	s, ws := startAsSandboxUser(t)
	ctx := ctxT(t)
	for cmd, want := range map[string]string{
		"whoami":                       name,
		"id -u":                        strconv.Itoa(uid),
		"cd ~ && pwd":                  "/home/" + name,
		"echo $HOME $USER":             "/home/" + name + " " + name,
		"sudo -n true && echo sudo-ok": "sudo-ok",
	} {
		obs, err := s.Client.Run(ctx, cmd, client.RunOptions{Timeout: 20 * time.Second})
		require.NoError(t, err)
		assert.Equal(t, want, obs.Content, cmd)
	}
	obs, err := s.Client.Run(ctx, "mkdir made && ls -ld made", client.RunOptions{})
	require.NoError(t, err)
	assert.Contains(t, obs.Content, name)
	fi, err := os.Stat(ws)
	require.NoError(t, err)
	assert.EqualValues(t, uid, fi.Sys().(*syscall.Stat_t).Uid, "the workspace belongs to the user")
	require.NotNil(t, obs.Metadata.Username)
	assert.Equal(t, name, *obs.Metadata.Username)
}

func TestStartup_RejectsUnknownPlugin(t *testing.T) {
	cmd := exec.Command(filepath.Join(binDir, "action-server"), "0", "--plugins", "teleporter")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	assert.Contains(t, out.String(), "Plugin teleporter not found")
}

func TestActionctl(t *testing.T) {
	s := startServer(t, startOpts{})
	ctl := func(args ...string) (string, int) {
		cmd := exec.Command(filepath.Join(binDir, "actionctl"), append([]string{"--url", s.URL}, args...)...)
		out, err := cmd.Output()
		code := 0
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitCode()
		}
		return string(out), code
	}
	out, code := ctl("wait", "--timeout", "10s")
	assert.Equal(t, 0, code)
	out, code = ctl("exec", "echo from-ctl")
	assert.Equal(t, "from-ctl\n", out)
	assert.Equal(t, 0, code)
	_, code = ctl("exec", "(exit 7)")
	assert.Equal(t, 7, code, "the command's exit code")
	out, code = ctl("info")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, `"uptime"`)
}

func TestPID1_ReapsOrphans(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("a new PID namespace needs root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not installed")
	}
	port := freePort(t)
	ws := t.TempDir()
	cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc",
		filepath.Join(binDir, "action-server"), strconv.Itoa(port), "--host", "127.0.0.1",
		"--working-dir", ws, "--no-enable-browser")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	c := client.New("http://127.0.0.1:" + strconv.Itoa(port))
	ctx := ctxT(t)
	require.NoError(t, c.WaitUntilAlive(ctx), logs.String())

	// Orphans: children of a subshell that exits at once are re-parented
	// to PID 1 and must be reaped when they exit.
	_, err := c.Run(ctx, "for i in $(seq 1 50); do (sleep 0.2 &) ; done", client.RunOptions{Timeout: 20 * time.Second})
	require.NoError(t, err)
	time.Sleep(time.Second)
	obs, err := c.Run(ctx, "ps -eo stat= | grep -c '^Z' || true", client.RunOptions{Timeout: 20 * time.Second})
	require.NoError(t, err)
	assert.Equal(t, "0", obs.Content, "no zombies left")
	obs, err = c.Run(ctx, "ps -o comm= -p 1", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "action-server", obs.Content)
}
