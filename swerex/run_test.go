package swerex

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunInSession_CheckModes(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.session("default")
	cases := []struct {
		name      string
		command   string
		check     string
		wantCode  any // float64 exit code or nil
		wantClass string
		wantOut   string
	}{
		{"raise, success", "echo hello", "raise", float64(0), "", "hello\n"},
		{"raise, failure", "echo out; false", "raise", nil, classNonZeroExit, ""},
		{"silent, failure", "echo out; (exit 3)", "silent", float64(3), "", "out\n"},
		{"ignore, failure", "false", "ignore", nil, "", ""},
		{"no escapes, \\n line ends", `printf '\e[31mred\e[0m\r\nnext\n'`, "raise", float64(0), "", "red\nnext\n"},
		{"state persists", "cd /tmp && export X=1; echo $X", "raise", float64(0), "", "1\n"},
		{"state persisted", "pwd; echo $X", "raise", float64(0), "", "/tmp\n1\n"},
		{"empty command", "  ", "raise", float64(0), "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.run("default", map[string]any{"command": tc.command, "check": tc.check})
			if tc.wantClass != "" {
				require.Equal(t, statusException, r.status, "%v", r.body)
				class, msg, _ := r.exception()
				assert.Equal(t, tc.wantClass, class)
				assert.Contains(t, msg, "failed with exit code")
				return
			}
			require.Equal(t, http.StatusOK, r.status, "%v", r.body)
			assert.Equal(t, tc.wantCode, r.body["exit_code"])
			assert.Equal(t, tc.wantOut, r.body["output"])
			assert.Equal(t, psOneMarker, r.body["expect_string"])
			assert.Equal(t, "bash", r.body["session_type"])
		})
	}
}

func TestRunInSession_ErrorMsgPrefixesTheFailure(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.session("s")
	r := ts.run("s", map[string]any{"command": "echo o; exit 4", "error_msg": "setup"})
	require.Equal(t, statusException, r.status)
	_, msg, _ := r.exception()
	assert.True(t, strings.HasPrefix(msg, "setup: Command 'echo o; exit 4' failed with exit code 4. Here is the output:\n"), msg)
	// The shell died with `exit`; the session goes on in a new one.
	r = ts.run("s", map[string]any{"command": "echo alive"})
	require.Equal(t, http.StatusOK, r.status, "%v", r.body)
	assert.Equal(t, "alive\n", r.body["output"])
}

func TestRunInSession_SyntaxErrorIsRefusedWithBashsWords(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.session("s")
	r := ts.run("s", map[string]any{"command": "echo 'unclosed"})
	require.Equal(t, statusException, r.status)
	class, msg, extra := r.exception()
	assert.Equal(t, classSyntax, class)
	assert.Contains(t, msg, "while checking bash command")
	assert.Contains(t, extra["bash_stderr"], "bash: line 1: unexpected EOF")
	assert.Equal(t, "", extra["bash_stdout"])
	r = ts.run("s", map[string]any{"command": "echo next"})
	assert.Equal(t, "next\n", r.body["output"], "nothing was left waiting for a quote")
}

func TestRunInSession_TimeoutKeepsOutputAndInterruptEndsTheWholeTree(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.session("s")
	pidFile := ts.dir + "/escaped.pid"
	cases := []struct {
		name    string
		command string
	}{
		// Ctrl-C ends the job, not the background job it started.
		{"ctrl-c", "sleep 300 & echo $! > " + pidFile + "; echo started; sleep 301"},
		// The job ignores Ctrl-C, and its child left the terminal's
		// session: both must be killed.
		{"ignores ctrl-c", "bash -c 'trap \"\" INT; setsid sleep 300 & echo $! > " + pidFile + "; echo started; while :; do sleep 1; done'"},
		// A loop in bash itself that ignores Ctrl-C: only bash can go.
		{"loop in the shell", "trap '' INT; sleep 300 & echo $! > " + pidFile + "; echo started; while :; do :; done"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.run("s", map[string]any{"command": tc.command, "timeout": 1.0})
			require.Equal(t, statusException, r.status, "%v", r.body)
			class, msg, extra := r.exception()
			assert.Equal(t, classCommandTimeout, class)
			assert.Contains(t, msg, "timeout after 1.0 seconds while running command")
			assert.Contains(t, extra["output"], "started", "the partial output is kept")

			data, err := os.ReadFile(pidFile)
			require.NoError(t, err)
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			require.NoError(t, err)
			require.True(t, alive(pid), "the escaped child runs before the interrupt")

			r = ts.run("s", map[string]any{"action_type": "bash_interrupt"})
			require.Equal(t, http.StatusOK, r.status, "%v", r.body)
			assert.Equal(t, float64(0), r.body["exit_code"])
			require.Eventually(t, func() bool { return !alive(pid) }, 5e9, 1e7, "no child of the command outlives the interrupt")

			r = ts.run("s", map[string]any{"command": "trap - INT; echo usable"})
			require.Equal(t, http.StatusOK, r.status, "%v", r.body)
			// bash may add its notice of the killed background job.
			assert.True(t, strings.HasPrefix(r.body["output"].(string), "usable\n"), r.body["output"])
		})
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := statFields(stat)
	return len(f) > 0 && string(f[0]) != "Z"
}

func TestRunInSession_InteractiveProgramWithExpect(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.session("s")
	steps := []struct {
		name       string
		action     map[string]any
		wantExpect string
		wantOut    string
	}{
		{"start, up to its prompt", map[string]any{"command": "read -p 'name> ' n; read -p 'age> ' a; echo \"hi $n, $a\"",
			"is_interactive_command": true, "expect": []string{"name> "}}, "name> ", ""},
		{"answer, up to the next prompt", map[string]any{"command": "bob",
			"is_interactive_command": true, "expect": []string{`a[g]e> `}}, `a[g]e> `, ""},
		{"quit: back at the prompt", map[string]any{"command": "42", "is_interactive_quit": true}, psOneMarker, "42\nhi bob, 42\n"},
	}
	for _, st := range steps {
		r := ts.run("s", st.action)
		require.Equal(t, http.StatusOK, r.status, "%s: %v", st.name, r.body)
		assert.Equal(t, st.wantExpect, r.body["expect_string"], st.name)
		assert.Equal(t, st.wantOut, r.body["output"], st.name)
		assert.Equal(t, float64(0), r.body["exit_code"], st.name)
	}
	r := ts.run("s", map[string]any{"command": "echo after"})
	assert.Equal(t, "after\n", r.body["output"], "the session is back to commands")
}

func TestRunInSession_ExpectWhileRunningHasNoExitCode(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.session("s")
	cases := []struct {
		check     string
		wantClass string
	}{{"raise", classNoExitCode}, {"silent", ""}, {"ignore", ""}}
	for _, tc := range cases {
		t.Run(tc.check, func(t *testing.T) {
			r := ts.run("s", map[string]any{"command": "echo ready; sleep 300", "expect": []string{"rea.y"}, "check": tc.check})
			if tc.wantClass != "" {
				require.Equal(t, statusException, r.status, "%v", r.body)
				class, _, _ := r.exception()
				assert.Equal(t, tc.wantClass, class)
			} else {
				require.Equal(t, http.StatusOK, r.status, "%v", r.body)
				assert.Nil(t, r.body["exit_code"])
				assert.Equal(t, "rea.y", r.body["expect_string"])
			}
			r = ts.run("s", map[string]any{"action_type": "bash_interrupt"})
			require.Equal(t, http.StatusOK, r.status, "%v", r.body)
		})
	}
}

func TestCreateSession_SourcesStartupFilesAndRefusesDuplicates(t *testing.T) {
	ts := newTestServer(t, nil)
	rc := ts.dir + "/rc.sh"
	require.NoError(t, os.WriteFile(rc, []byte("export FROM_RC=yes\nPS1='custom> '\necho sourced\n"), 0o644))
	r := ts.post("/create_session", map[string]any{"session": "a", "startup_source": []string{rc}, "startup_timeout": 10.0})
	require.Equal(t, http.StatusOK, r.status, "%v", r.body)
	assert.Equal(t, "sourced\n", r.body["output"])
	r = ts.run("a", map[string]any{"command": "echo $FROM_RC"})
	assert.Equal(t, "yes\n", r.body["output"], "a PS1 the file sets does not break the session")

	r = ts.post("/create_session", map[string]any{"session": "a"})
	class, msg, _ := r.exception()
	assert.Equal(t, classSessionExists, class)
	assert.Equal(t, "session a already exists", msg)

	require.Equal(t, http.StatusOK, ts.post("/close_session", map[string]any{"session": "a"}).status)
	for _, path := range []string{"/close_session", "/run_in_session"} {
		r = ts.post(path, map[string]any{"session": "a", "command": "true", "action_type": "bash"})
		class, msg, _ = r.exception()
		assert.Equal(t, classNoSession, class, path)
		assert.Equal(t, "session 'a' does not exist", msg, path)
	}
}

func TestRunInSession_BoundsWhatItHoldsAndTakesHugeCommands(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.session("s")
	// 9 MB of output, more than a wait keeps.
	r := ts.run("s", map[string]any{"command": "head -c 9000000 /dev/zero | tr '\\0' a | fold -w 1000; echo; echo end"})
	require.Equal(t, http.StatusOK, r.status, "%v", r.body)
	out := r.body["output"].(string)
	assert.LessOrEqual(t, len(out), maxWaitText+200, "bounded")
	assert.True(t, strings.HasPrefix(out, "["), "says that output was dropped: %.80q", out)
	assert.True(t, strings.HasSuffix(out, "\nend\n"), "keeps the end: %q", out[max(0, len(out)-100):])

	// A command of a few megabytes reaches bash whole.
	huge := "x=" + strings.Repeat("y", 3<<20) + "; echo ${#x}"
	r = ts.run("s", map[string]any{"command": huge})
	require.Equal(t, http.StatusOK, r.status, "%v", r.body)
	assert.Equal(t, strconv.Itoa(3<<20)+"\n", r.body["output"])
}

func TestInterrupt_WithNothingRunningAnswersAtOnce(t *testing.T) {
	ts := newTestServer(t, nil)
	ts.session("s")
	r := ts.run("s", map[string]any{"action_type": "bash_interrupt"})
	require.Equal(t, http.StatusOK, r.status, "%v", r.body)
	assert.Equal(t, "", r.body["output"])
	assert.Equal(t, float64(0), r.body["exit_code"])
	assert.Equal(t, psOneMarker, r.body["expect_string"])
}
