package gym

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

func TestParse_ParsesCallsAndLiterals(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Call
	}{
		{"no argument", "go_back()", []Call{{Name: "go_back", Src: "go_back()"}}},
		{"double quoted", `click("a51")`, []Call{{Name: "click", Args: []any{"a51"}, Src: `click("a51")`}}},
		{"single quoted", `click('a51')`, []Call{{Name: "click", Args: []any{"a51"}, Src: `click('a51')`}}},
		{"escapes", `fill('45', "multi-line\nexample with \"quotes\" and \\ \x41\u00e9\t")`,
			[]Call{{Name: "fill", Args: []any{"45", "multi-line\nexample with \"quotes\" and \\ Aé\t"}, Src: `fill('45', "multi-line\nexample with \"quotes\" and \\ \x41\u00e9\t")`}}},
		{"quote of the other kind", `fill("1", "it's")`, []Call{{Name: "fill", Args: []any{"1", "it's"}, Src: `fill("1", "it's")`}}},
		{"unknown escape kept", `fill("1", "a\qb")`, []Call{{Name: "fill", Args: []any{"1", `a\qb`}, Src: `fill("1", "a\qb")`}}},
		{"triple quoted", "fill('1', '''two\nlines''')", []Call{{Name: "fill", Args: []any{"1", "two\nlines"}, Src: "fill('1', '''two\nlines''')"}}},
		{"numbers", "scroll(-50.2, 100)", []Call{{Name: "scroll", Args: []any{-50.2, int64(100)}, Src: "scroll(-50.2, 100)"}}},
		{"exponent", "noop(1e3)", []Call{{Name: "noop", Args: []any{1000.0}, Src: "noop(1e3)"}}},
		{"keywords and list", `click('48', button="middle", modifiers=["Shift", 'Alt'],)`,
			[]Call{{Name: "click", Args: []any{"48"}, Kwargs: []Kwarg{{"button", "middle"}, {"modifiers", List{"Shift", "Alt"}}}, Src: `click('48', button="middle", modifiers=["Shift", 'Alt'],)`}}},
		{"constants, tuple and dict", `f(True, False, None, (1,), {"k": [2]})`,
			[]Call{{Name: "f", Args: []any{true, false, nil, Tuple{int64(1)}, Dict{{Key: "k", Value: List{int64(2)}}}}, Src: `f(True, False, None, (1,), {"k": [2]})`}}},
		{"several lines, comments and semicolons", "# first\nscroll(0, 200)  # down\n\nnoop(); go_back()\n",
			[]Call{
				{Name: "scroll", Args: []any{int64(0), int64(200)}, Src: "scroll(0, 200)"},
				{Name: "noop", Src: "noop()"},
				{Name: "go_back", Src: "go_back()"},
			}},
		{"hash inside a string is no comment", `fill("1", "#tag")`, []Call{{Name: "fill", Args: []any{"1", "#tag"}, Src: `fill("1", "#tag")`}}},
		{"arguments across lines", "fill(\n  '1',\n  'x'\n)", []Call{{Name: "fill", Args: []any{"1", "x"}, Src: "fill(\n  '1',\n  'x'\n)"}}},
		{"only comments", "# nothing\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.src)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParse_ReportsSyntaxErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"unclosed call", `click("a"`, "expected ')' to close click( but the input ended (line 1, column 10)"},
		{"unterminated string", `click("a)`, "unterminated string literal (line 1, column 7)"},
		{"newline in string", "fill('1', 'a\nb')", "unterminated string literal (line 1, column 11)"},
		{"missing comma", `click("a" "b")`, "expected ',' or ')' but found '\"' (line 1, column 11)"},
		{"positional after keyword", `click(button="left", "a")`, "positional argument follows keyword argument (line 1, column 22)"},
		{"bare name", `click(bid)`, `unexpected name "bid": only literal values are allowed as arguments (line 1, column 10)`},
		{"not a call", "click", "expected '(' after click (line 1, column 6)"},
		{"stray text", "click('a') )", "expected a function call but found ')' (line 1, column 12)"},
		{"error on second line", "noop()\nfill('1', [1, 2)", "expected ']' but found ')' (line 2, column 16)"},
		{"bad number", "scroll(1e, 2)", "invalid number (line 1, column 8)"},
		{"dict key not a string", "f({1: 2})", "dict keys must be strings (line 1, column 4)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.src)
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.want, se.Error())
		})
	}
}

func TestPyRepr_LiteralsMatchPython(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{List{"a", int64(1)}, "['a', 1]"},
		{List{Tuple{}, Tuple{int64(1), int64(2)}}, "[(), (1, 2)]"},
		{Tuple{"a"}, "('a',)"},
		{Dict{{Key: "k", Value: false}, {Key: "a", Value: nil}}, "{'k': False, 'a': None}"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, pyfmt.Repr(tt.in), "%#v", tt.in)
	}
}
