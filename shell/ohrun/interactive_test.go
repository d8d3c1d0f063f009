package ohrun

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// step is one request of an interactive exchange and what it must return.
// A step that waits for more input is sent without blocking, so the
// no-change timeout ends it; a step that completes blocks (bounded by a
// hard timeout), so a slow machine cannot turn it into a timeout.
type step struct {
	command  string
	input    bool
	waits    bool   // the command still runs afterwards: exit -1, no-change suffix
	content  string // the exact content, unless contains is set
	contains string
	exit     int
	suffix   string // for a completion; default suffixCompleted(exit)
}

// TestRun_CommandsThatReadTheirFollowingLines: what the agent types after a
// command that reads input, bash's own input included (a here-document
// left open), reaches it as it would at a terminal.
func TestRun_CommandsThatReadTheirFollowingLines(t *testing.T) {
	const quiet = time.Second
	cases := []struct {
		name  string
		needs string // a program the case needs on PATH
		steps []step
	}{
		{name: "open heredoc, as upstream's test_interactive_command", steps: []step{
			{command: "cat << EOF", waits: true},
			{command: "line 1", input: true, waits: true},
			{command: "line 2", input: true, waits: true},
			{command: "EOF", input: true, content: "line 1\nline 2"},
		}},
		{name: "quoted delimiter keeps the body literal", steps: []step{
			{command: "cat <<'END'", waits: true},
			{command: "$HOME `x`", input: true, waits: true},
			{command: "END", input: true, content: "$HOME `x`"},
		}},
		{name: "unquoted delimiter expands the body", steps: []step{
			{command: "x=5; cat <<EOF", waits: true},
			{command: "x is $x", input: true, waits: true},
			{command: "EOF", input: true, content: "x is 5"},
		}},
		{name: "a line that only looks like the delimiter", steps: []step{
			{command: "cat <<EOF", waits: true},
			{command: "EOF EOF", input: true, waits: true},
			{command: "EOFX", input: true, waits: true},
			{command: "EOF", input: true, content: "EOF EOF\nEOFX"},
		}},
		{name: "<<- ends at a tab-indented delimiter", steps: []step{
			{command: "cat <<-EOF", waits: true},
			{command: "\tindented", input: true, waits: true},
			{command: "\tEOF", input: true, content: "indented"},
		}},
		{name: "part of the body in the command", steps: []step{
			{command: "cat << EOF\nfirst", waits: true},
			{command: "EOF", input: true, content: "first"},
		}},
		{name: "two heredocs read in order", steps: []step{
			{command: "cat <<A; cat <<B", waits: true},
			{command: "a1", input: true, waits: true},
			{command: "A", input: true, waits: true},
			{command: "b1", input: true, waits: true},
			{command: "B", input: true, content: "a1\nb1"},
		}},
		{name: "heredoc into a pipeline", steps: []step{
			{command: "cat <<EOF | tr a-z A-Z", waits: true},
			{command: "shout", input: true, waits: true},
			{command: "EOF", input: true, content: "SHOUT"},
		}},
		{name: "exit code of the completed command", steps: []step{
			{command: "grep -q needle <<EOF", waits: true},
			{command: "haystack", input: true, waits: true},
			{command: "EOF", input: true, content: "", exit: 1},
		}},
		{name: "Ctrl-C abandons the heredoc and the shell goes on", steps: []step{
			{command: "cat <<EOF", waits: true},
			{command: "never shown", input: true, waits: true},
			{command: "C-c", input: true, content: "^C", exit: 130, suffix: suffixCompletedKey(130, "C-c")},
			{command: "echo after", content: "after"},
		}},
		{name: "Ctrl-D ends the heredoc where it is", steps: []step{
			{command: "cat <<EOF", waits: true},
			{command: "kept", input: true, waits: true},
			{command: "C-d", input: true, contains: "kept", suffix: suffixCompletedKey(0, "C-d")},
		}},
		{name: "closed heredoc runs at once", steps: []step{
			{command: "cat <<EOF\nline 1\nline 2\nEOF", content: "line 1\nline 2"},
		}},
		{name: "heredoc inside an unfinished compound fails at once", steps: []step{
			{command: "if true; then cat <<EOF", contains: "syntax error: unexpected end of file", exit: 2},
			{command: "echo after", content: "after"},
		}},
		{name: "read as a command, then its input", steps: []step{
			{command: "read x", waits: true},
			{command: "typed text", input: true, content: ""},
			{command: `echo "got $x"`, content: "got typed text"},
		}},
		{name: "cat with no arguments reads the terminal", steps: []step{
			{command: "cat", waits: true},
			{command: "echoed back", input: true, waits: true, content: "echoed back"},
			{command: "C-d", input: true, content: "", suffix: suffixCompletedKey(0, "C-d")},
		}},
		{name: "python3 reading stdin", needs: "python3", steps: []step{
			{command: `python3 -c "import sys; print(sys.stdin.readline().upper(), end='')"`, waits: true},
			{command: "quiet", input: true, content: "QUIET"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.needs != "" {
				if _, err := exec.LookPath(tc.needs); err != nil {
					t.Skipf("%s is not installed", tc.needs)
				}
			}
			s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = quiet })
			for i, st := range tc.steps {
				req := Request{Command: st.command, IsInput: st.input}
				if !st.waits {
					req.Blocking, req.Timeout = true, 30*time.Second
				}
				res := run(t, s, req)
				what := []any{"step %d %q: %+v", i, st.command, res}
				if st.waits {
					require.False(t, res.Finished, what...)
					assert.Equal(t, -1, res.Metadata.ExitCode, what...)
					assert.Equal(t, suffixNoChange("1"), res.Suffix, what...)
					if i == 0 {
						assert.Equal(t, "", res.Prefix, what...)
					} else {
						assert.Equal(t, prefixContinued, res.Prefix, what...)
					}
				} else {
					require.True(t, res.Finished, what...)
					assert.Equal(t, st.exit, res.Metadata.ExitCode, what...)
					want := st.suffix
					if want == "" {
						want = suffixCompleted(st.exit)
					}
					assert.Equal(t, want, res.Suffix, what...)
					assert.Equal(t, "", res.Prefix, what...)
				}
				if st.contains != "" {
					assert.Contains(t, res.Content, st.contains, what...)
				} else {
					assert.Equal(t, st.content, res.Content, what...)
				}
			}
		})
	}
}
