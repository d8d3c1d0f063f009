package files

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The editor's messages were defined by a Python program; these helpers give
// Python's string semantics where the output depends on them.

// maxResponseChars is the editor's output limit, counted in code points as
// Python's len() does.
const maxResponseChars = 16000

// Truncation notices appended after the first maxResponseChars characters.
const (
	noticeGeneric   = "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you.</NOTE>"
	noticeTextFile  = "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>"
	noticeBinary    = "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. Please use Python libraries to view the entire file or search for specific content within the file.</NOTE>"
	noticeDirectory = "<response clipped><NOTE>Due to the max output limit, only part of this directory has been shown to you. You should use `ls -la` instead to view large directories incrementally.</NOTE>"
)

// truncateChars keeps the first limit code points of s and appends notice
// when s is longer.
func truncateChars(s string, limit int, notice string) string {
	if len(s) <= limit { // byte length bounds the rune count
		return s
	}
	n := 0
	for i := range s {
		if n == limit {
			return s[:i] + notice
		}
		n++
	}
	return s
}

// pyIsSpace mirrors str.isspace: Go's unicode.IsSpace plus the ASCII
// information separators U+001C..U+001F that Python also treats as space.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyStrip mirrors str.strip() without arguments.
func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// isPyLineBreak reports the characters str.splitlines() splits on (besides
// "\r\n", handled by the caller).
func isPyLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// pySplitlines mirrors str.splitlines() (line breaks dropped).
func pySplitlines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isPyLineBreak(r) {
			i += size
			continue
		}
		lines = append(lines, s[start:i])
		i += size
		if r == '\r' && i < len(s) && s[i] == '\n' {
			i++
		}
		start = i
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// universalNewlines translates "\r\n" and lone "\r" to "\n", as Python's text
// mode does when it reads a file.
func universalNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// splitLinesKeepEnds splits text (already newline-translated) into lines that
// keep their "\n", as iterating over a Python text file does.
func splitLinesKeepEnds(s string) []string {
	if s == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// countLines is the number of lines iterating over the file would yield.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// pyIntList renders ints the way Python prints a list: "[1, 2, 3]".
func pyIntList(ns []int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, n := range ns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(itoa(n))
	}
	b.WriteByte(']')
	return b.String()
}

func itoa(n int) string {
	return strconv.Itoa(n)
}

// pyPath normalises p the way str(pathlib.PurePosixPath(p)) does: repeated
// slashes and "." components are dropped, ".." is kept, a trailing slash is
// removed, and exactly two leading slashes survive. The editor prints paths
// in this form.
func pyPath(p string) string {
	root := ""
	switch {
	case strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "///"):
		root = "//"
	case strings.HasPrefix(p, "/"):
		root = "/"
	}
	var parts []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			parts = append(parts, c)
		}
	}
	if root == "" && len(parts) == 0 {
		return "."
	}
	return root + strings.Join(parts, "/")
}
