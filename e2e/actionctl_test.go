package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ctlRun is what one actionctl run printed and how it exited.
type ctlRun struct {
	stdout, stderr string
	code           int
}

// actionctl runs the built actionctl with args in a clean environment plus
// env, so a developer's own ACTION_SERVER_URL or SESSION_API_KEY cannot
// change results.
func actionctl(t *testing.T, env []string, args ...string) ctlRun {
	t.Helper()
	cmd := exec.CommandContext(ctxT(t), filepath.Join(binDir, "actionctl"), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := ctlRun{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		r.code = exitErr.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return r
}

func TestActionctl_APIKeyFromEnvironmentNotShownInHelp(t *testing.T) {
	const key = "help-must-not-show-this-key"
	env := []string{"SESSION_API_KEY=" + key}
	help := actionctl(t, env, "--help")
	require.Equal(t, 0, help.code, help.stderr)
	assert.Contains(t, help.stdout, "--api-key")
	assert.NotContains(t, help.stdout+help.stderr, key)
	sub := actionctl(t, env, "exec", "--help")
	assert.NotContains(t, sub.stdout+sub.stderr, key)

	// The variable is still the key's default.
	s := startServer(t, startOpts{apiKey: key})
	r := actionctl(t, env, "--url", s.URL, "exec", "echo keyed")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "keyed\n", r.stdout)
	r = actionctl(t, nil, "--url", s.URL, "exec", "echo keyed")
	assert.NotEqual(t, 0, r.code, "refused without the key")
	assert.Contains(t, r.stderr, "Invalid API Key")
	r = actionctl(t, []string{"SESSION_API_KEY=wrong"}, "--url", s.URL, "--api-key", key, "exec", "echo flag")
	assert.Equal(t, 0, r.code, "--api-key wins over the variable: %s", r.stderr)
}

// oneJSON decodes stdout as exactly one JSON document.
func oneJSON(t *testing.T, r ctlRun) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var v any
	require.NoError(t, dec.Decode(&v), "stdout %q, stderr %q", r.stdout, r.stderr)
	var extra any
	require.ErrorIs(t, dec.Decode(&extra), io.EOF, "one document only: %q", r.stdout)
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{"list": v}
}

// jsonLines decodes stdout as JSON lines.
func jsonLines(t *testing.T, r ctlRun) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "line %q of %q (stderr %q)", line, r.stdout, r.stderr)
		out = append(out, m)
	}
	return out
}

func TestActionctl_JSONOnEveryCommand(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	ctl := func(args ...string) ctlRun {
		return actionctl(t, nil, append([]string{"--url", s.URL, "--json"}, args...)...)
	}
	src := filepath.Join(t.TempDir(), "up.txt")
	require.NoError(t, os.WriteFile(src, []byte("up"), 0o644))
	zipPath := filepath.Join(t.TempDir(), "ws.zip")
	file := filepath.Join(s.WorkDir, "j.txt")

	cases := []struct {
		name  string
		args  []string
		code  int
		check func(t *testing.T, doc map[string]any)
	}{
		{"wait", []string{"wait", "--timeout", "10s"}, 0, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, map[string]any{"ok": true}, doc)
		}},
		{"exec", []string{"exec", "echo hi"}, 0, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, "run", doc["observation"])
			assert.Equal(t, "hi", doc["content"])
		}},
		{"exec exit code", []string{"exec", "(exit 3)"}, 3, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, "run", doc["observation"])
			assert.Equal(t, false, doc["success"])
		}},
		{"exec refused", []string{"exec", "echo a\necho b"}, 1, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, "error", doc["observation"])
			assert.Contains(t, doc["content"], "Cannot execute multiple commands at once")
		}},
		{"info", []string{"info"}, 0, func(t *testing.T, doc map[string]any) {
			assert.Contains(t, doc, "uptime")
		}},
		{"session new", []string{"session", "new", "--id", "j"}, 0, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, "j", doc["id"])
		}},
		{"session ls", []string{"session", "ls"}, 0, func(t *testing.T, doc map[string]any) {
			assert.Len(t, doc["list"], 2)
		}},
		{"signal, nothing running", []string{"signal", "--session", "j", "SIGINT"}, 1, func(t *testing.T, doc map[string]any) {
			assert.Contains(t, doc["error"], "no command is running")
			assert.EqualValues(t, 409, doc["status"])
		}},
		{"write", []string{"write", file, "content"}, 0, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, "write", doc["observation"])
		}},
		{"read", []string{"read", file}, 0, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, "read", doc["observation"])
			assert.Equal(t, "content\n", doc["content"])
		}},
		{"read missing", []string{"read", "missing.txt"}, 1, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, "error", doc["observation"])
		}},
		{"edit", []string{"edit", "view", file}, 0, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, "edit", doc["observation"])
		}},
		{"ls", []string{"ls"}, 0, func(t *testing.T, doc map[string]any) {
			assert.Contains(t, doc["list"], "j.txt")
		}},
		{"upload", []string{"upload", src, s.WorkDir}, 0, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, "up.txt", doc["filename"])
		}},
		{"download", []string{"download", s.WorkDir, zipPath}, 0, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, true, doc["ok"])
			assert.Equal(t, zipPath, doc["destination"])
			assert.Greater(t, doc["bytes"], 0.0)
		}},
		{"download to stdout", []string{"download", s.WorkDir, "-"}, 2, func(t *testing.T, doc map[string]any) {
			assert.Contains(t, doc["error"], "give DEST a file name")
		}},
		{"browse", []string{"browse", "http://127.0.0.1:1/"}, 1, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, "error", doc["observation"], "the browser is disabled")
		}},
		{"ipython", []string{"ipython", "print(1)"}, 1, func(t *testing.T, doc map[string]any) {
			assert.Contains(t, doc["error"], "JupyterRequirement not found")
			assert.EqualValues(t, 500, doc["status"])
		}},
		{"attach", []string{"attach"}, 2, func(t *testing.T, doc map[string]any) {
			assert.Contains(t, doc["error"], "interactive")
			assert.EqualValues(t, 0, doc["status"])
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ctl(tc.args...)
			assert.Equal(t, tc.code, r.code, r.stderr)
			tc.check(t, oneJSON(t, r))
		})
	}

	// signal with a command to signal, then session rm, twice.
	cmd, err := s.Client.StartCommand(ctx, "j", "echo started; sleep 60")
	require.NoError(t, err)
	_, err = s.Client.Output(ctx, "j", cmd.ID, 0, 10*time.Second)
	require.NoError(t, err)
	r := ctl("signal", "--session", "j", "SIGINT")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, map[string]any{"ok": true, "session": "j", "signal": "SIGINT"}, oneJSON(t, r))
	r = ctl("session", "rm", "j")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, map[string]any{"ok": true, "removed": []any{"j"}}, oneJSON(t, r))
	r = ctl("session", "rm", "j")
	assert.Equal(t, 1, r.code)
	assert.EqualValues(t, 404, oneJSON(t, r)["status"])

	// exec --follow: JSON lines of output, then the exit event.
	r = ctl("exec", "--follow", "echo one; echo two; (exit 4)")
	assert.Equal(t, 4, r.code, r.stderr)
	lines := jsonLines(t, r)
	require.NotEmpty(t, lines)
	var data strings.Builder
	for _, l := range lines[:len(lines)-1] {
		require.Equal(t, "output", l["event"], l)
		data.WriteString(l["data"].(string))
	}
	assert.Equal(t, "one\ntwo\n", data.String())
	last := lines[len(lines)-1]
	assert.Equal(t, "exit", last["event"])
	assert.EqualValues(t, 4, last["command"].(map[string]any)["exit_code"])

	// No server at all: still one JSON document.
	r = actionctl(t, nil, "--url", "http://127.0.0.1:1", "--json", "info")
	assert.NotEqual(t, 0, r.code)
	doc := oneJSON(t, r)
	assert.Contains(t, doc["error"], "connection refused")
	assert.EqualValues(t, 0, doc["status"])
}

func TestActionctl_ExitCodes(t *testing.T) {
	const key = "exit-code-key"
	s := startServer(t, startOpts{apiKey: key})
	// A server whose shell is still starting: the port answers, /alive
	// says 503.
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte("sleep 60\n"), 0o644))
	starting := startServer(t, startOpts{noWait: true, env: []string{"HOME=" + home}})
	require.Eventually(t, func() bool {
		_, err := starting.Client.ServerInfo(ctxT(t))
		return err == nil
	}, 20*time.Second, 20*time.Millisecond, "the port opens before the shell is ready")

	withKey := []string{"SESSION_API_KEY=" + key}
	cases := []struct {
		name string
		env  []string
		args []string
		code int
	}{
		{"success", withKey, []string{"--url", s.URL, "info"}, 0},
		{"remote exit code", withKey, []string{"--url", s.URL, "exec", "(exit 7)"}, 7},
		{"error", withKey, []string{"--url", s.URL, "session", "rm", "ghost"}, 1},
		{"unknown command", nil, []string{"teleport"}, 2},
		{"unknown subcommand", nil, []string{"session", "teleport"}, 2},
		{"missing argument", nil, []string{"exec"}, 2},
		{"bad flag", nil, []string{"exec", "--no-such-flag", "true"}, 2},
		{"no key", nil, []string{"--url", s.URL, "exec", "true"}, 3},
		{"wrong key", nil, []string{"--url", s.URL, "--api-key", "wrong", "exec", "true"}, 3},
		{"wrong key, json", nil, []string{"--url", s.URL, "--api-key", "wrong", "--json", "session", "ls"}, 3},
		{"unreachable", nil, []string{"--url", "http://127.0.0.1:1", "info"}, 4},
		{"not ready", nil, []string{"--url", starting.URL, "exec", "true"}, 4},
		{"wait gives up", nil, []string{"--url", starting.URL, "wait", "--timeout", "300ms"}, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := actionctl(t, tc.env, tc.args...)
			assert.Equal(t, tc.code, r.code, "stdout %q stderr %q", r.stdout, r.stderr)
		})
	}
}
