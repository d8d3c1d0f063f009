package e2e

import (
	"bytes"
	"context"
	"fmt"
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
)

// newMark returns an environment entry for a server: every process it
// starts (shell, Jupyter Server, kernel, what a cell runs) inherits it, so
// a test finds them all however they were reparented.
func newMark() string {
	return fmt.Sprintf("E2E_PROCESS_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
}

// markedPIDs returns the processes whose environment holds mark.
func markedPIDs(t *testing.T, mark string) []int {
	t.Helper()
	paths, err := filepath.Glob("/proc/[0-9]*/environ")
	require.NoError(t, err)
	var pids []int
	for _, path := range paths {
		env, err := os.ReadFile(path)
		if err != nil {
			continue // exited meanwhile
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == mark {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// jupyterPlugin returns the jupyter plugin's status on /server_info.
func jupyterPlugin(t *testing.T, s *server) api.PluginStatus {
	t.Helper()
	info, err := s.Client.ServerInfo(ctxT(t))
	require.NoError(t, err)
	for _, p := range info.Plugins {
		if p.Name == "jupyter" {
			return p
		}
	}
	return api.PluginStatus{}
}

// jupyterServerPID finds the server's Jupyter Server: the process of its
// own that listens on the port /server_info reports.
func jupyterServerPID(t *testing.T, s *server, mark string) int {
	t.Helper()
	port := jupyterPlugin(t, s).Port
	require.NotZero(t, port)
	arg := []byte("--ServerApp.port=" + strconv.Itoa(port) + "\x00")
	for _, pid := range markedPIDs(t, mark) {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && bytes.Contains(cmdline, arg) {
			return pid
		}
	}
	t.Fatalf("no Jupyter Server on port %d among the server's processes", port)
	return 0
}

func startJupyterServer(t *testing.T, mark string) *server {
	ws := t.TempDir()
	return startServer(t, startOpts{workDir: ws, env: []string{mark},
		args: []string{"--working-dir", ws, "--no-enable-browser", "--plugins", "jupyter"}})
}

func TestPlugins_SIGTERMWithJupyterEndsEveryProcess(t *testing.T) {
	cases := []struct {
		name   string
		before func(t *testing.T, s *server, mark string)
	}{
		{"while a cell runs", func(t *testing.T, s *server, mark string) {
			cell(t, s, "import subprocess; child = subprocess.Popen(['sleep', '300'])")
			go s.Client.Execute(context.Background(), ipython("open('running', 'w').close()\nimport time; time.sleep(300)", 600))
			require.Eventually(t, func() bool {
				_, err := os.Stat(filepath.Join(s.WorkDir, "running"))
				return err == nil
			}, 30*time.Second, 20*time.Millisecond, "the cell starts")
		}},
		{"while jupyter restarts", func(t *testing.T, s *server, mark string) {
			require.NoError(t, syscall.Kill(-jupyterServerPID(t, s, mark), syscall.SIGKILL))
			require.Eventually(t, func() bool { return jupyterPlugin(t, s).State == api.PluginRestarting },
				30*time.Second, 5*time.Millisecond, "the server notices the Jupyter Server died")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mark := newMark()
			s := startJupyterServer(t, mark)
			tc.before(t, s, mark)
			require.NotEmpty(t, markedPIDs(t, mark))

			start := time.Now()
			require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
			select {
			case <-s.exited:
			case <-time.After(10 * time.Second):
				t.Fatal("server did not exit within 10 s of SIGTERM")
			}
			t.Logf("exited %v after SIGTERM", time.Since(start))
			// An orphaned kernel notices its server is gone within a second.
			assert.Eventually(t, func() bool { return len(markedPIDs(t, mark)) == 0 }, 3*time.Second, 50*time.Millisecond,
				"processes outlived the server: %v", markedPIDs(t, mark))
		})
	}
}

func TestPlugins_StartingStateIsVisibleUntilReady(t *testing.T) {
	ws := t.TempDir()
	s := startServer(t, startOpts{workDir: ws, noWait: true,
		args: []string{"--working-dir", ws, "--no-enable-browser", "--plugins", "jupyter"}})
	ctx := ctxT(t)
	alive := func() int {
		resp, err := http.Get(s.URL + "/alive")
		if err != nil {
			return 0 // not listening yet
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	sawStarting := false
	lastUptime := 0.0
	for {
		require.NoError(t, ctx.Err(), "the server never became ready")
		info, err := s.Client.ServerInfo(ctx)
		if err != nil {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		// Uptime counts from the server's start, before and after the
		// plugins are up: it never goes back.
		require.GreaterOrEqual(t, info.Uptime, lastUptime, "uptime went back")
		lastUptime = info.Uptime
		if code := alive(); code != http.StatusOK {
			// Taken before /alive answered 503: the plugin is listed and
			// starting, or already ready while the rest of start-up runs.
			require.Equal(t, http.StatusServiceUnavailable, code)
			require.Len(t, info.Plugins, 1, "plugins are listed while they start")
			assert.Contains(t, []api.PluginState{api.PluginStarting, api.PluginReady}, info.Plugins[0].State)
			sawStarting = sawStarting || info.Plugins[0].State == api.PluginStarting
			time.Sleep(5 * time.Millisecond)
			continue
		}
		break
	}
	assert.True(t, sawStarting, "jupyter was never reported as starting")
	info, err := s.Client.ServerInfo(ctx)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, info.Uptime, lastUptime, "uptime went back once ready")
	st := jupyterPlugin(t, s)
	assert.Equal(t, api.PluginReady, st.State)
	assert.NotZero(t, st.Port)
}

func TestPlugins_JupyterRestartIsVisibleAndRecovers(t *testing.T) {
	mark := newMark()
	s := startJupyterServer(t, mark)
	assert.Equal(t, "1", cell(t, s, "print(1)"))
	pid := jupyterServerPID(t, s, mark)
	require.NoError(t, syscall.Kill(-pid, syscall.SIGKILL))

	var restarting api.PluginStatus
	require.Eventually(t, func() bool {
		restarting = jupyterPlugin(t, s)
		return restarting.State == api.PluginRestarting
	}, 30*time.Second, 5*time.Millisecond, "the server reports the restart")
	assert.Contains(t, restarting.Error, "jupyter server exited")
	require.Eventually(t, func() bool { return jupyterPlugin(t, s).State == api.PluginReady },
		60*time.Second, 20*time.Millisecond, "jupyter comes back")
	assert.NotEqual(t, pid, jupyterServerPID(t, s, mark), "a new Jupyter Server")

	out := cell(t, s, "print('back')")
	assert.True(t, strings.HasSuffix(out, "\nback"), out)
	assert.Contains(t, out, "kernel had died and was restarted")
}

func TestStartup_InitPluginTimeout(t *testing.T) {
	cases := []struct{ name, value, want string }{
		{"too short for jupyter", "0.01", "plugins not ready within INIT_PLUGIN_TIMEOUT (10ms)"},
		// The log quotes the message, so its own quotes are escaped.
		{"not a number", "soon", `INIT_PLUGIN_TIMEOUT=\"soon\" is not a positive number of seconds`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			mark := newMark()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(binDir, "action-server"), strconv.Itoa(freePort(t)),
				"--host", "127.0.0.1", "--working-dir", ws, "--no-enable-browser", "--plugins", "jupyter")
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8",
				"INIT_PLUGIN_TIMEOUT=" + tc.value, mark}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			require.NoError(t, ctx.Err(), "the server must give up on its own:\n%s", out.String())
			var exitErr *exec.ExitError
			require.ErrorAs(t, err, &exitErr, out.String())
			assert.NotZero(t, exitErr.ExitCode())
			assert.Contains(t, out.String(), tc.want)
			assert.Eventually(t, func() bool { return len(markedPIDs(t, mark)) == 0 }, 3*time.Second, 50*time.Millisecond,
				"processes outlived the failed start: %v", markedPIDs(t, mark))
		})
	}
}
