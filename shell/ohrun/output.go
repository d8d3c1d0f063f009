package ohrun

import (
	"strings"

	"github.com/actionserver/actionserver/shell"
	"unicode"
	"unicode/utf8"
)

// Output shaping: an observation shows the part of a command's output the
// agent has not seen (window), as a terminal shows it and cut to size
// (finish).

// view is the agent's position in the output of the last command.
type view struct {
	gen      int64  // the session's generation it belongs to (shell.Turn.Last)
	off      int64  // finalized bytes already shown
	live     string // the changeable tail as it was shown
	observed int    // observations made of the command
	reported bool   // its completion has been shown
}

// window returns the output of c the agent has not seen yet and moves the
// agent's position to the end. Text beyond HistoryLines lines, or dropped
// from the output buffer, is cut from the front; truncated reports that,
// and lines how many lines are left.
func (r *Runner) window(c *shell.Command, hidden bool) (text string, truncated bool, lines int) {
	v := r.view
	keep := 0
	if !hidden {
		// Only the last HistoryLines lines can be shown: copy just those,
		// not the whole output buffer. What was shown of the changeable
		// text (v.live) is at the front and removed by afterShown, so keep
		// that many lines more; when lines are skipped even so, the rest
		// is cut to HistoryLines below, as it would be from the whole.
		keep = r.opts.HistoryLines + strings.Count(v.live, "\n") + 2
	}
	tail := c.Tail(v.off, keep)

	cur := string(tail.Data) + tail.Live
	text = cur
	if !tail.Skipped {
		text = afterShown(cur, v.live)
	}
	r.view.off, r.view.live = tail.End, tail.Live

	truncated = tail.Lost > 0 || tail.Skipped
	if !hidden {
		text, truncated = lastLines(text, r.opts.HistoryLines, truncated)
	}
	if truncated {
		lines = countLines(text)
	}
	return text, truncated, lines
}

// lastLines keeps the last n lines of text (a final newline does not start
// a line), reporting whether it cut anything.
func lastLines(text string, n int, truncated bool) (string, bool) {
	body := strings.TrimSuffix(text, "\n")
	if strings.Count(body, "\n") < n {
		return text, truncated
	}
	cut := len(body)
	for range n {
		cut = strings.LastIndexByte(body[:cut], '\n')
	}
	return text[cut+1:], true
}

// afterShown returns the part of cur after what was shown. cur starts with
// the text that was still changeable when shown; where that text changed
// (a progress bar redrawn), the changed line is shown again whole.
func afterShown(cur, shown string) string {
	if strings.HasPrefix(cur, shown) {
		return cur[len(shown):]
	}
	n := 0
	for n < len(cur) && n < len(shown) && cur[n] == shown[n] {
		n++
	}
	return cur[strings.LastIndexByte(cur[:n], '\n')+1:]
}

// countLines counts lines as Python's splitlines does for '\n' text.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
}

// finish turns window text into observation content: lines right-trimmed
// (as a terminal shows them), the whole trimmed, the echo of typed input
// removed, and truncated unless hidden.
func (r *Runner) finish(text string, req Request, echo string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	out := strings.TrimLeftFunc(strings.Join(lines, "\n"), unicode.IsSpace)
	if req.IsInput && echo != "" {
		out = strings.TrimLeftFunc(strings.TrimPrefix(out, strings.TrimLeftFunc(echo, unicode.IsSpace)), unicode.IsSpace)
	}
	out = strings.TrimRightFunc(out, unicode.IsSpace)
	if !req.Hidden {
		out = truncateMiddle(out, r.opts.MaxOutputChars)
	}
	return out
}

// truncateMiddle keeps the first and last max/2 characters of s.
func truncateMiddle(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	half := max / 2
	head := s
	for i := range s {
		if half == 0 {
			head = s[:i]
			break
		}
		half--
	}
	tail := s
	for n, i := max/2, len(s); n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
		tail = s[i:]
	}
	return head + truncationMarker + tail
}
