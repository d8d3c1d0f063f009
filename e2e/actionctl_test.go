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

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
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
			assert.Equal(t, "conflict", doc["code"])
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
		{"cp", []string{"cp", src, ":cp/up.txt"}, 0, func(t *testing.T, doc map[string]any) {
			assert.Equal(t, map[string]any{"ok": true, "source": src, "destination": ":cp/up.txt", "bytes": 2.0}, doc)
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
			assert.NotContains(t, doc, "code", "an OpenHands route sends no code")
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
	assert.Equal(t, "not_found", oneJSON(t, r)["code"])

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
	// A server whose plugin is still starting (a Jupyter server that
	// never comes up): the port answers, /alive says 503.
	stalled := filepath.Join(t.TempDir(), "jupyter-server")
	require.NoError(t, os.WriteFile(stalled, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755))
	ws := t.TempDir()
	starting := startServer(t, startOpts{noWait: true, workDir: ws, env: []string{"JUPYTER_SERVER_BIN=" + stalled},
		args: []string{"--working-dir", ws, "--no-enable-browser", "--plugins", "jupyter"}})
	require.Eventually(t, func() bool {
		_, err := starting.Client.ServerInfo(ctxT(t))
		return err == nil
	}, 20*time.Second, 20*time.Millisecond, "the port opens before the plugins are ready")

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

func TestActionctl_SignalKeepsSessionAndCwd(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	r := actionctl(t, nil, "--url", s.URL, "session", "new", "--id", "sig", "--cwd", s.WorkDir)
	require.Equal(t, 0, r.code, r.stderr)
	cmd, err := s.Client.StartCommand(ctx, "sig", "cd / && echo started && sleep 60")
	require.NoError(t, err)
	// Signal only once sleep runs, not while bash is still starting it.
	out, err := s.Client.Output(ctx, "sig", cmd.ID, 0, 20*time.Second)
	require.NoError(t, err)
	require.Equal(t, "started\n", out.Data)

	r = actionctl(t, nil, "--url", s.URL, "signal", "--session", "sig", "SIGINT")
	require.Equal(t, 0, r.code, r.stderr)
	done := waitDone(t, s.Client, "sig", cmd.ID)
	require.NotNil(t, done.ExitCode)
	assert.Equal(t, 130, *done.ExitCode, "sleep ended by SIGINT")
	assert.False(t, done.ShellDied)

	r = actionctl(t, nil, "--url", s.URL, "exec", "--follow", "--session", "sig", `echo "$PWD"`)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "/\n", r.stdout, "the session survives with the cwd the command left")
}

func TestActionctl_AttachUnderATerminal(t *testing.T) {
	s := startServer(t, startOpts{})
	_, err := s.Client.CreateSession(ctxT(t), api.CreateSessionRequest{ID: "tty"})
	require.NoError(t, err)

	cmd := exec.Command(filepath.Join(binDir, "actionctl"), "--url", s.URL, "attach", "--session", "tty")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	term, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	require.NoError(t, err)
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
		term.Close()
	})
	var screen syncBuffer
	go io.Copy(&screen, term)
	waitFor := func(want string) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Contains(screen.String(), want) }, 20*time.Second, 10*time.Millisecond,
			"waiting for %q; the terminal shows %q", want, screen.String())
	}
	typeText := func(text string) {
		t.Helper()
		_, err := term.Write([]byte(text))
		require.NoError(t, err)
	}

	// Type only once the terminal is raw, as a person would.
	waitFor("[attached to session tty")
	// The typed line is echoed as typed; only its output has the sum.
	typeText("echo hi-$((40+2))\r")
	waitFor("hi-42")
	typeText("echo cols=$(tput cols)\r")
	waitFor("cols=80")

	// Resizing the terminal resizes the session's: SIGWINCH reaches
	// actionctl, which tells the server. Ask until the new size shows,
	// as the resize and the typing travel separately.
	require.NoError(t, pty.Setsize(term, &pty.Winsize{Rows: 30, Cols: 123}))
	require.Eventually(t, func() bool {
		typeText("echo cols=$(tput cols)\r")
		time.Sleep(100 * time.Millisecond)
		return strings.Contains(screen.String(), "cols=123")
	}, 20*time.Second, 10*time.Millisecond, "the terminal shows %q", screen.String())

	// Ctrl-] detaches; the session goes on.
	typeText("\x1d")
	select {
	case <-exited:
		require.NoError(t, waitErr, "detaching exits 0")
	case <-time.After(20 * time.Second):
		t.Fatalf("actionctl did not detach; the terminal shows %q", screen.String())
	}
	waitFor("[detached]")
	_, err = s.Client.GetSession(ctxT(t), "tty")
	assert.NoError(t, err, "the session outlives the detach")
}

func TestActionctl_FollowResumesAfterDroppedConnection(t *testing.T) {
	s := startServer(t, startOpts{})
	// The proxy cuts its first connection, which carries the command's
	// start and then, kept alive, its output stream.
	proxied := cuttingProxy(t, strings.TrimPrefix(s.URL, "http://"), 100_000)
	want, err := exec.Command("seq", "1", "200000").Output()
	require.NoError(t, err)

	r := actionctl(t, nil, "--url", proxied, "exec", "--follow", "seq 1 200000")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "resuming at byte", "the connection was cut and resumed")
	assert.True(t, r.stdout == string(want), "every line exactly once: got %d bytes, want %d", len(r.stdout), len(want))
}

func TestActionctl_CompletionBash(t *testing.T) {
	r := actionctl(t, nil, "completion", "bash")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "__start_actionctl")
	script := filepath.Join(t.TempDir(), "actionctl.bash")
	require.NoError(t, os.WriteFile(script, []byte(r.stdout), 0o644))
	out, err := exec.Command("bash", "-n", script).CombinedOutput()
	assert.NoError(t, err, "bash parses the script: %s", out)
	// Sourced, it registers the completion of actionctl.
	out, err = exec.Command("bash", "-c", "source "+script+" && complete -p actionctl").CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "__start_actionctl")
}
