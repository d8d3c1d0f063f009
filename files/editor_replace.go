package files

import (
	"fmt"
	"strings"
)

// strReplace replaces the one occurrence of oldStr with newStr. When oldStr
// does not occur verbatim, both are stripped of surrounding whitespace and
// tried again, because models often add or lose a newline at the ends.
func (e *Editor) strReplace(p, oldStr, newStr string) (EditResult, error) {
	if err := e.validateFile(p); err != nil {
		return EditResult{}, err
	}
	f, err := e.readText(p)
	if err != nil {
		return EditResult{}, err
	}
	content := f.text

	first, count := findOccurrences(content, oldStr)
	if count == 0 {
		oldStr, newStr = pyStrip(oldStr), pyStrip(newStr)
		first, count = findOccurrences(content, oldStr)
		if count == 0 {
			return EditResult{}, errorf(nil, "No replacement was performed, old_str `%s` did not appear verbatim in %s.", oldStr, p)
		}
	}
	if count > 1 {
		return EditResult{}, errorf(nil, "No replacement was performed. Multiple occurrences of old_str `%s` in lines %s. Please ensure it is unique.",
			oldStr, pyIntList(occurrenceLines(content, oldStr)))
	}

	newContent := content[:first] + newStr + content[first+len(oldStr):]
	if err := e.writeText(p, newContent, f); err != nil {
		return EditResult{}, err
	}
	if err := e.hist.add(p, content); err != nil {
		return EditResult{}, err
	}

	line := strings.Count(content[:first], "\n") + 1
	start := max(0, line-snippetContext)
	end := line + snippetContext + strings.Count(newStr, "\n")
	snippet := linesRange(newContent, start+1, end)
	out := fmt.Sprintf("The file %s has been edited. ", p) +
		makeOutput(snippet, "a snippet of "+p, start+1) +
		"Review the changes and make sure they are as expected. Edit the file again if necessary."
	return EditResult{Output: out, OldContent: content, NewContent: newContent}, nil
}

// findOccurrences returns the offset of the first non-overlapping occurrence
// of sub in s and how many there are (2 means "more than one"). An empty sub
// matches at every position, as an empty regular expression does.
func findOccurrences(s, sub string) (first, count int) {
	if sub == "" {
		if s == "" {
			return 0, 1
		}
		return 0, 2
	}
	first = strings.Index(s, sub)
	if first < 0 {
		return -1, 0
	}
	if strings.Contains(s[first+len(sub):], sub) {
		return first, 2
	}
	return first, 1
}

// occurrenceLines lists the distinct 1-based lines where non-overlapping
// occurrences of sub start, in order.
func occurrenceLines(s, sub string) []int {
	var lines []int
	if sub == "" {
		// Every position matches, so every line has a match.
		for i := 1; i <= strings.Count(s, "\n")+1; i++ {
			lines = append(lines, i)
		}
		return lines
	}
	line, pos := 1, 0
	for {
		i := strings.Index(s[pos:], sub)
		if i < 0 {
			return lines
		}
		line += strings.Count(s[pos:pos+i], "\n")
		if len(lines) == 0 || lines[len(lines)-1] != line {
			lines = append(lines, line)
		}
		line += strings.Count(sub, "\n")
		pos += i + len(sub)
	}
}
