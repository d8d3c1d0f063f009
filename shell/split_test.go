package shell

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSplitCommands(t *testing.T) {
	upstream := []string{
		"ls -l",
		"echo -e \"hello\nworld\"",
		`echo -e "hello it's me"`,
		"echo \\\n    -e 'hello' \\\n    world",
		`echo -e 'hello\nworld\nare\nyou\nthere?'`,
		"echo -e 'hello\nworld\nare\nyou\n\nthere?'",
		"echo -e 'hello\nworld \"'",
	}
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "   ", []string{""}},
		{"one", "ls -l", []string{"ls -l"}},
		{"two lines", "ls -l\necho hi", []string{"ls -l", "echo hi"}},
		{"semicolon on one line", "cd /tmp; ls", []string{"cd /tmp; ls"}},
		{"background on one line", "sleep 1 & echo hi", []string{"sleep 1 & echo hi"}},
		{"background then newline", "sleep 1 &\necho hi", []string{"sleep 1 &", "echo hi"}},
		{"and or pipe", "a && b || c | d", []string{"a && b || c | d"}},
		{"newline inside quotes", "echo -e \"hello\nworld\"", []string{"echo -e \"hello\nworld\""}},
		{"backslash continuation", "echo \\\n -e \"foo\"", []string{"echo \\\n -e \"foo\""}},
		{"heredoc", "cat << EOF\nline 1\nline 2\nEOF", []string{"cat << EOF\nline 1\nline 2\nEOF"}},
		{"heredoc then command", "cat <<'EOF' > f\na;b\nEOF\nls", []string{"cat <<'EOF' > f\na;b\nEOF", "ls"}},
		{"loop", "for i in 1 2; do\n  echo $i\ndone && echo done", []string{"for i in 1 2; do\n  echo $i\ndone && echo done"}},
		{"if block", "if true; then\n echo y\nfi", []string{"if true; then\n echo y\nfi"}},
		{"find exec", `find /tmp -type f -exec grep -l "x" {} \;`, []string{`find /tmp -type f -exec grep -l "x" {} \;`}},
		{"comment attaches to previous", "echo a # c\necho b", []string{"echo a # c", "echo b"}},
		{"leading comment", "# setup\nls", []string{"# setup\nls"}},
		{"blank lines ignored", "echo a\n\n\necho b\n", []string{"echo a", "echo b"}},
		{"unclosed quote is one", "echo 'unclosed\nls", []string{"echo 'unclosed\nls"}},
		{"upstream seven", strings.Join(upstream, "\n"), upstream},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, SplitCommands(tc.in))
		})
	}
}

func TestMultipleCommandsError_Text(t *testing.T) {
	err := &MultipleCommandsError{Commands: []string{"ls", "pwd"}}
	assert.Equal(t, "ERROR: Cannot execute multiple commands at once.\n"+
		"Please run each command separately OR chain them into a single command via && or ;\n"+
		"Provided commands:\n(1) ls\n(2) pwd", err.Error())
}

func TestSplitCommands_EmptyHeredoc(t *testing.T) {
	assert.Equal(t, []string{"cat <<EOF\nEOF", "ls"}, SplitCommands("cat <<EOF\nEOF\nls"))
	assert.Equal(t, []string{"cat <<A; cat <<B\na\nA\nb\nB", "ls"}, SplitCommands("cat <<A; cat <<B\na\nA\nb\nB\nls"))
}
