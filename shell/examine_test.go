package shell

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExamineInput(t *testing.T) {
	cases := []struct {
		text       string
		open       []heredocStop
		incomplete bool
	}{
		{"echo hi", nil, false},
		{"cat <<EOF\nx\nEOF", nil, false},
		{"cat << EOF", []heredocStop{{word: "EOF"}}, false},
		{"cat << EOF\nbody", []heredocStop{{word: "EOF"}}, false},
		{"cat <<'E F'", []heredocStop{{word: "E F"}}, false},
		{`cat <<"EOF"`, []heredocStop{{word: "EOF"}}, false},
		{`cat <<\EOF`, []heredocStop{{word: "EOF"}}, false},
		{"cat <<-EOF", []heredocStop{{word: "EOF", stripTabs: true}}, false},
		{"cat <<A <<-B", []heredocStop{{word: "A"}, {word: "B", stripTabs: true}}, false},
		{"cat <<A <<-B\nx\nA", []heredocStop{{word: "B", stripTabs: true}}, false},
		{"cat <<EOF; cat <<X\nEOF", []heredocStop{{word: "X"}}, false},
		{"cat <<EOF | tr a b", []heredocStop{{word: "EOF"}}, false},
		{"echo 'open", nil, true},
		{"if true; then cat <<EOF", nil, true},
		{"cat <<EOF; echo 'open", nil, true},
	}
	for _, tc := range cases {
		open, incomplete := examineInput(tc.text)
		assert.Equal(t, tc.open, open, tc.text)
		assert.Equal(t, tc.incomplete, incomplete, tc.text)
	}
}
