package files

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Diff renders the change from old to new as the edit observation's diff:
// Python difflib's unified diff of the texts split on "\n", with no context
// lines, both headers naming path, every line right-trimmed. No change gives
// "".
func Diff(path, old, new string) string {
	a := strings.Split(old, "\n")
	b := strings.Split(new, "\n")
	groups := difflib.NewMatcher(a, b).GetGroupedOpCodes(0)
	if len(groups) == 0 {
		return ""
	}
	var out []string
	out = append(out, "--- "+path, "+++ "+path)
	for _, g := range groups {
		first, last := g[0], g[len(g)-1]
		out = append(out, fmt.Sprintf("@@ -%s +%s @@", unifiedRange(first.I1, last.I2), unifiedRange(first.J1, last.J2)))
		for _, op := range g {
			switch op.Tag {
			case 'e':
				for _, l := range a[op.I1:op.I2] {
					out = append(out, " "+l)
				}
			case 'r', 'd':
				for _, l := range a[op.I1:op.I2] {
					out = append(out, "-"+l)
				}
			}
			if op.Tag == 'r' || op.Tag == 'i' {
				for _, l := range b[op.J1:op.J2] {
					out = append(out, "+"+l)
				}
			}
		}
	}
	for i, l := range out {
		out[i] = strings.TrimRightFunc(l, pyIsSpace)
	}
	return strings.Join(out, "\n")
}

// unifiedRange formats a hunk range as difflib does: "start" for one line,
// "start,len" otherwise, an empty range starting one line earlier.
func unifiedRange(start, stop int) string {
	begin, length := start+1, stop-start
	if length == 1 {
		return fmt.Sprint(begin)
	}
	if length == 0 {
		begin--
	}
	return fmt.Sprintf("%d,%d", begin, length)
}
