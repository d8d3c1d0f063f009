package shell

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Output shaping: an observation shows the part of a command's output the
// agent has not seen (window), as a terminal shows it and cut to size
// (finish).

// view is the agent's position in the output of the last command.
type view struct {
	off      int64  // finalized bytes already shown
	live     string // the changeable tail as it was shown
	observed int    // observations made of the command
	reported bool   // its completion has been shown
}

// window returns the output of c the agent has not seen yet and moves the
// agent's position to the end. Text beyond HistoryLines lines, or dropped
// from the output buffer, is cut from the front; truncated reports that,
// and lines how many lines are left.
func (s *Session) window(p *process, c *Command, hidden bool) (text string, truncated bool, lines int) {
	// Only this request moves the view, so it is read before p.mu is
	// taken: the session's lock is never taken inside the process's.
	s.mu.Lock()
	v := s.view
	s.mu.Unlock()
	p.mu.Lock()
	from := v.off
	skipped := false
	if !hidden {
		// Only the last HistoryLines lines can be shown: copy just those,
		// not the whole output buffer. What was shown of the changeable
		// text (v.live) is at the front and removed by afterShown, so keep
		// that many lines more; when lines are skipped even so, the rest
		// is cut to HistoryLines below, as it would be from the whole.
		if ls := c.out.lineStart(s.opts.HistoryLines + strings.Count(v.live, "\n") + 2); ls > from {
			from, skipped = ls, true
		}
	}
	fin, lost := c.out.ReadFrom(from, -1)
	live := p.liveText(c)
	end := c.out.total
	p.mu.Unlock()

	cur := string(fin) + string(live)
	text = cur
	if !skipped {
		text = afterShown(cur, v.live)
	}
	s.mu.Lock()
	s.view.off, s.view.live = end, string(live)
	s.mu.Unlock()

	truncated = lost > 0 || skipped
	if !hidden {
		text, truncated = lastLines(text, s.opts.HistoryLines, truncated)
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
func (s *Session) finish(text string, req Request, echo string) string {
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
		out = truncateMiddle(out, s.opts.MaxOutputChars)
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
