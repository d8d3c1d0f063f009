package shell

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"mvdan.cc/sh/v3/syntax"
)

func TestPlainCommand(t *testing.T) {
	for _, tc := range []struct {
		text  string
		plain bool
	}{
		{"true", true},
		{"ls -la /tmp/a.b", true},
		{"X=1 make -j2 all", true},
		{"git log --oneline -n 5", true},
		{"", false},
		{"echo a; echo b", false},
		{"ls\npwd", false},
		{"echo 'x'", false},
		{"echo $HOME", false},
		{"a && b", false},
		{"for x in a b", false},
		{"if true", false},
		{"done", false},
		{"time", false},
	} {
		assert.Equal(t, tc.plain, plainCommand(tc.text), "%q", tc.text)
	}
}

// FuzzPlainCommand checks the shortcut against the parser it skips: a plain
// command is one complete statement.
func FuzzPlainCommand(f *testing.F) {
	for _, s := range []string{"true", "ls -l", "for x in a", "if", "a=1 b", "x y z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !plainCommand(text) {
			return
		}
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
		if err != nil {
			t.Fatalf("%q is plain but does not parse: %v", text, err)
		}
		if len(file.Stmts) > 1 {
			t.Fatalf("%q is plain but holds %d statements", text, len(file.Stmts))
		}
	})
}
