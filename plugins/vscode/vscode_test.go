package vscode

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/freeport"
	"github.com/actionserver/actionserver/plugins"
)

var uuid4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// requireServer fails, rather than skips, when the VS Code server the
// tests run is missing: make test installs it through scripts/deps.sh.
func requireServer(t *testing.T) {
	t.Helper()
	require.FileExists(t, CodeServerMain, "install it with scripts/deps.sh (as root)")
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := freeport.Pick("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// environ is a plugin environment with only PATH from this process, so
// that no VSCODE_* variable of the machine running the tests leaks in.
func environ(kv ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH")}, kv...)
}

// rootEnv runs the server as root with its home and workspace in temp
// directories.
func rootEnv(t *testing.T, kv ...string) plugins.Env {
	return plugins.Env{Username: "root", Home: t.TempDir(), WorkDir: t.TempDir(), Environ: environ(kv...)}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// startPlugin starts the plugin and stops it when the test ends.
func startPlugin(t *testing.T, env plugins.Env) *Plugin {
	t.Helper()
	p := NewPlugin(Options{})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		assert.NoError(t, p.Stop(ctx))
	})
	require.NoError(t, p.Start(ctxT(t), env))
	return p
}

// get fetches url following redirects with a cookie jar, as a browser
// opening the VS Code link does.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// groupMembers lists the live (not zombie) processes of process group
// pgid.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func (p *Plugin) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		return 0
	}
	return p.cur.Pid()
}

func TestStart_ServesOnlyWithTheToken(t *testing.T) {
	requireServer(t)
	port := freePort(t)
	p := startPlugin(t, rootEnv(t, "VSCODE_PORT="+strconv.Itoa(port)))

	assert.Equal(t, plugins.Status{Name: Name, State: plugins.StateReady, Port: port}, p.Status())
	tok := p.Token()
	require.NotNil(t, tok)
	assert.Regexp(t, uuid4, *tok)

	base := fmt.Sprintf("http://127.0.0.1:%d/", port)
	status, _ := get(t, base)
	assert.Equal(t, http.StatusForbidden, status, "no token")
	status, _ = get(t, base+"?tkn=wrong")
	assert.Equal(t, http.StatusForbidden, status, "wrong token")
	status, body := get(t, base+"?tkn="+*tok)
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "<html", "the workbench page")
}

func TestStart_EveryStartMakesANewToken(t *testing.T) {
	requireServer(t)
	a := startPlugin(t, rootEnv(t, "VSCODE_PORT="+strconv.Itoa(freePort(t))))
	b := startPlugin(t, rootEnv(t, "VSCODE_PORT="+strconv.Itoa(freePort(t))))
	require.NotNil(t, a.Token())
	require.NotNil(t, b.Token())
	assert.NotEqual(t, *a.Token(), *b.Token())
}

func TestStart_WritesWorkspaceSettingsUnlessPresent(t *testing.T) {
	const want = `{
    "workbench.colorTheme": "Default Dark Modern",
    "workbench.startupEditor": "none",
    "chat.commandCenter.enabled": false
}
`
	tests := []struct {
		name     string
		existing string // "" for none
		want     string
	}{
		{name: "fresh workspace", want: want},
		{name: "workspace with its own settings", existing: `{"editor.tabSize": 2}`, want: `{"editor.tabSize": 2}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := rootEnv(t) // no VSCODE_PORT: settings come first, then it is disabled
			path := filepath.Join(env.WorkDir, ".vscode", "settings.json")
			if tc.existing != "" {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(tc.existing), 0o644))
			}
			startPlugin(t, env)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			if tc.existing == "" {
				fi, err := os.Stat(path)
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o666), fi.Mode().Perm())
			}
		})
	}
}

func TestStart_SettingsGoToWorkspaceBase(t *testing.T) {
	base := t.TempDir()
	env := rootEnv(t, "WORKSPACE_BASE="+base)
	startPlugin(t, env)
	assert.FileExists(t, filepath.Join(base, ".vscode", "settings.json"))
	assert.NoFileExists(t, filepath.Join(env.WorkDir, ".vscode", "settings.json"))
}

func TestStart_DisabledWhenItCannotRun(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port

	tests := []struct {
		name       string
		username   string
		vars       []string
		candidates []string // nil: the default ones
		reason     string
		token      bool
		settings   bool
	}{
		{name: "user not allowed", username: "mallory", vars: []string{"VSCODE_PORT=1234"},
			reason: "VS Code runs only as root, openhands or $RUNTIME_USERNAME, not mallory"},
		{name: "another user than RUNTIME_USERNAME", username: "mallory",
			vars:   []string{"VSCODE_PORT=1234", "RUNTIME_USERNAME=alice"},
			reason: "VS Code runs only as root, openhands or $RUNTIME_USERNAME, not mallory"},
		{name: "no VSCODE_PORT", username: "root", reason: "VSCODE_PORT is not set", settings: true},
		{name: "VSCODE_PORT not a number", username: "root", vars: []string{"VSCODE_PORT=abc"},
			reason: `VSCODE_PORT="abc" is not a port`, settings: true},
		{name: "VSCODE_PORT out of range", username: "root", vars: []string{"VSCODE_PORT=70000"},
			reason: `VSCODE_PORT="70000" is not a port`, settings: true},
		{name: "override names no server", username: "root",
			vars:   []string{"VSCODE_PORT=1234", "VSCODE_SERVER_BIN=/nonexistent/openvscode-server"},
			reason: "no VS Code server at /nonexistent/openvscode-server (VSCODE_SERVER_BIN)", settings: true},
		{name: "no server installed", username: "openhands", vars: []string{"VSCODE_PORT=1234"},
			candidates: []string{"/nonexistent/a", "/nonexistent/b.js"},
			reason:     "no VS Code server installed (looked for /nonexistent/a, /nonexistent/b.js)", settings: true},
		{name: "port busy keeps the token, as upstream", username: "root",
			vars:   []string{"VSCODE_PORT=" + strconv.Itoa(busyPort)},
			reason: fmt.Sprintf("port %d is not available", busyPort), token: true, settings: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := rootEnv(t, tc.vars...)
			env.Username = tc.username
			p := NewPlugin(Options{})
			if tc.candidates != nil {
				p.candidates = tc.candidates
			}
			t.Cleanup(func() { assert.NoError(t, p.Stop(context.Background())) })
			require.NoError(t, p.Start(ctxT(t), env), "a plugin that cannot run does not stop the server")

			st := p.Status()
			assert.Equal(t, plugins.StateDisabled, st.State)
			assert.Contains(t, st.Error, tc.reason)
			if tc.token {
				require.NotNil(t, p.Token())
				assert.Regexp(t, uuid4, *p.Token())
			} else {
				assert.Nil(t, p.Token())
			}
			assert.Nil(t, p.cur, "nothing was launched")
			settings := filepath.Join(env.WorkDir, ".vscode", "settings.json")
			if tc.settings {
				assert.FileExists(t, settings)
			} else {
				assert.NoFileExists(t, settings)
			}
		})
	}
}

// launcher writes an executable that takes openvscode-server's command
// line, as OpenHands' images have it, and runs the real VS Code server
// with it after running before (shell, may be empty).
func launcher(t *testing.T, before string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "openvscode-server")
	script := fmt.Sprintf("#!/bin/sh\n%s\nexec node %s \"$@\" --accept-server-license-terms --server-data-dir \"$HOME/data\"\n",
		before, CodeServerMain)
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

func TestStop_EndsTheProcessGroup(t *testing.T) {
	requireServer(t)
	port := freePort(t)
	p := NewPlugin(Options{})
	// The server forks helpers once a workbench connects; a background
	// sleep stands in for them without a browser.
	bin := launcher(t, "sleep 600 &")
	require.NoError(t, p.Start(ctxT(t), rootEnv(t, "VSCODE_PORT="+strconv.Itoa(port), "VSCODE_SERVER_BIN="+bin)))
	pgid := p.pid()
	require.NotZero(t, pgid)
	require.Len(t, groupMembers(t, pgid), 2, "the server and its helper")
	status, _ := get(t, fmt.Sprintf("http://127.0.0.1:%d/?tkn=%s", port, *p.Token()))
	require.Equal(t, http.StatusOK, status)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, p.Stop(ctx))
	// A helper re-parented to init may take a moment to be reaped.
	assert.Eventually(t, func() bool { return len(groupMembers(t, pgid)) == 0 }, 10*time.Second, 50*time.Millisecond,
		"processes of the group left: %v", groupMembers(t, pgid))
	_, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	assert.Error(t, err, "the port is closed")
	assert.NoError(t, p.Stop(ctx), "a second Stop is a no-op")
}

func TestSupervise_RestartsAKilledServer(t *testing.T) {
	requireServer(t)
	port := freePort(t)
	p := startPlugin(t, rootEnv(t, "VSCODE_PORT="+strconv.Itoa(port)))
	old := p.pid()
	require.NotZero(t, old)
	tok := *p.Token()

	require.NoError(t, syscall.Kill(-old, syscall.SIGKILL))
	require.Eventually(t, func() bool { return p.Status().State == plugins.StateRestarting }, 10*time.Second, 5*time.Millisecond,
		"a dead server shows as restarting")
	assert.Contains(t, p.Status().Error, "signal: killed")
	require.Eventually(t, func() bool { return p.Status().State == plugins.StateReady }, 60*time.Second, 20*time.Millisecond)

	assert.NotEqual(t, old, p.pid(), "a new process")
	assert.Equal(t, plugins.Status{Name: Name, State: plugins.StateReady, Port: port}, p.Status())
	assert.Equal(t, tok, *p.Token(), "the host's cached token stays valid")
	status, _ := get(t, fmt.Sprintf("http://127.0.0.1:%d/?tkn=%s", port, tok))
	assert.Equal(t, http.StatusOK, status)
}

// sandboxUser makes a user for the server to run as. It is not e2e's
// astest: the action server gives the user it creates sudo, and a test
// there must not find a user made here without it, or lose it mid-test.
func sandboxUser(t *testing.T) *user.User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running the server as another user needs root")
	}
	const name, uid = "asvscode", "1991"
	if u, err := user.Lookup(name); err == nil {
		return u
	}
	out, err := exec.Command("useradd", "-rm", "-d", "/home/"+name, "-s", "/bin/bash", "-g", "root", "-u", uid, name).CombinedOutput()
	require.NoError(t, err, "useradd: %s", out)
	t.Cleanup(func() { _ = exec.Command("userdel", "-r", name).Run() })
	u, err := user.Lookup(name)
	require.NoError(t, err)
	return u
}

func TestStart_RunsAsTheSandboxUser(t *testing.T) {
	requireServer(t)
	u := sandboxUser(t)
	uid, err := strconv.Atoi(u.Uid)
	require.NoError(t, err)
	gid, err := strconv.Atoi(u.Gid)
	require.NoError(t, err)
	// The user must reach the workspace; t.TempDir's parents are root's.
	parent, err := os.MkdirTemp("", "vscode-user-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(parent) })
	require.NoError(t, os.Chmod(parent, 0o755))
	ws := filepath.Join(parent, "workspace")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.Chown(ws, uid, gid))

	port := freePort(t)
	p := startPlugin(t, plugins.Env{
		Username: u.Username, UID: uid, GID: gid, Home: u.HomeDir, WorkDir: ws,
		Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)},
		Environ:    environ("VSCODE_PORT="+strconv.Itoa(port), "RUNTIME_USERNAME="+u.Username),
	})
	require.Equal(t, plugins.StateReady, p.Status().State, p.Status().Error)
	pid := p.pid()

	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	assert.Regexp(t, fmt.Sprintf(`(?m)^Uid:\s+%d\s+%d`, uid, uid), string(status))
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	require.NoError(t, err)
	assert.Equal(t, ws, cwd)
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	require.NoError(t, err)
	assert.Contains(t, strings.Split(string(env), "\x00"), "HOME="+u.HomeDir)
	assert.DirExists(t, filepath.Join(u.HomeDir, ".vscode-server"), "server data in the user's home")

	fi, err := os.Stat(filepath.Join(ws, ".vscode"))
	require.NoError(t, err)
	assert.EqualValues(t, uid, fi.Sys().(*syscall.Stat_t).Uid, ".vscode belongs to the user")
	code, _ := get(t, fmt.Sprintf("http://127.0.0.1:%d/?tkn=%s", port, *p.Token()))
	assert.Equal(t, http.StatusOK, code)
}

// TestStart_OpenVSCodeServerUnderBasePath checks openvscode-server's
// command line, and that the path-routed base path reaches the server.
func TestStart_OpenVSCodeServerUnderBasePath(t *testing.T) {
	requireServer(t)
	bin := launcher(t, "")
	port := freePort(t)
	p := startPlugin(t, rootEnv(t, "VSCODE_PORT="+strconv.Itoa(port), "VSCODE_SERVER_BIN="+bin,
		"RUNTIME_ID=rt42", "RUNTIME_URL=https://runtime.example/rt42"))
	tok := *p.Token()

	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.pid()))
	require.NoError(t, err)
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	assert.Equal(t, []string{"--host", "127.0.0.1", "--connection-token", tok, "--port", strconv.Itoa(port),
		"--disable-workspace-trust", "--server-base-path", "/rt42/vscode"}, args[2:11], "openvscode-server's flags")

	base := fmt.Sprintf("http://127.0.0.1:%d/rt42/vscode/", port)
	code, _ := get(t, base)
	assert.Equal(t, http.StatusForbidden, code)
	code, _ = get(t, base+"?tkn="+tok)
	assert.Equal(t, http.StatusOK, code)
}

func TestBasePath(t *testing.T) {
	tests := []struct {
		name string
		vars []string
		want string
	}{
		{name: "nothing set", want: ""},
		{name: "path-routed runtime", vars: []string{"RUNTIME_ID=abc", "RUNTIME_URL=https://h.example/abc"}, want: "/abc/vscode"},
		{name: "path-routed with more path", vars: []string{"RUNTIME_ID=abc", "RUNTIME_URL=https://h.example/abc/x/"}, want: "/abc/vscode"},
		{name: "host-routed runtime", vars: []string{"RUNTIME_ID=abc", "RUNTIME_URL=https://abc.h.example/"}, want: ""},
		{name: "no path at all", vars: []string{"RUNTIME_ID=abc", "RUNTIME_URL=https://abc.h.example"}, want: ""},
		{name: "URL without id", vars: []string{"RUNTIME_URL=https://h.example/abc"}, want: ""},
		{name: "explicit", vars: []string{"OPENVSCODE_SERVER_BASE_PATH=p/q/", "RUNTIME_ID=abc", "RUNTIME_URL=https://h.example/abc"}, want: "/p/q"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, basePath(lookup(environ(tc.vars...))))
		})
	}
}

func TestLookup_EnvironWinsOverTheProcess(t *testing.T) {
	t.Setenv("VSCODE_PORT", "4321")
	assert.Equal(t, "", lookup(environ()).get("VSCODE_PORT"), "a set Environ is the whole truth")
	assert.Equal(t, "1", lookup(environ("VSCODE_PORT=2", "VSCODE_PORT=1")).get("VSCODE_PORT"), "last one wins, as exec does")
	assert.Equal(t, "4321", lookup(nil).get("VSCODE_PORT"))
}

// BenchmarkStart_ColdToReady measures a start of the real server up to the
// moment its port answers, and its stop.
func BenchmarkStart_ColdToReady(b *testing.B) {
	if _, err := os.Stat(CodeServerMain); err != nil {
		b.Fatalf("install the VS Code server with scripts/deps.sh: %v", err)
	}
	home, work := b.TempDir(), b.TempDir()
	for b.Loop() {
		port, err := freeport.Pick("127.0.0.1")
		require.NoError(b, err)
		p := NewPlugin(Options{})
		err = p.Start(context.Background(), plugins.Env{Username: "root", Home: home, WorkDir: work,
			Environ: environ("VSCODE_PORT=" + strconv.Itoa(port))})
		require.NoError(b, err)
		require.Equal(b, plugins.StateReady, p.Status().State)
		require.NoError(b, p.Stop(context.Background()))
	}
}
