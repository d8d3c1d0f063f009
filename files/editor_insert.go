package files

import (
	"fmt"
	"strings"
)

// insert puts the lines of newStr after line n (0 = at the top).
func (e *Editor) insert(p string, n int, newStr string) (EditResult, error) {
	if err := e.validateFile(p); err != nil {
		return EditResult{}, err
	}
	f, err := e.readText(p)
	if err != nil {
		return EditResult{}, err
	}
	old := f.text
	numLines := countLines(old)
	if n < 0 || n > numLines {
		return EditResult{}, invalidParam("insert_line", itoa(n),
			fmt.Sprintf("It should be within the range of allowed values: %s", pyIntList([]int{0, numLines})))
	}

	newLines := strings.Split(newStr, "\n")
	head := linesRange(old, 1, n)
	var b strings.Builder
	b.Grow(len(old) + len(newStr) + 1)
	b.WriteString(head)
	for _, l := range newLines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(old[len(head):])
	newText := b.String()

	if err := e.writeText(p, newText, f); err != nil {
		return EditResult{}, err
	}
	start := max(0, n-snippetContext)
	end := min(numLines+len(newLines), n+snippetContext+len(newLines))
	snippet := linesRange(newText, start+1, end)
	if err := e.hist.add(p, old); err != nil {
		return EditResult{}, err
	}
	out := fmt.Sprintf("The file %s has been edited. ", p) +
		makeOutput(snippet, "a snippet of the edited file", max(1, n-snippetContext+1)) +
		"Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary."
	return EditResult{Output: out, OldContent: old, NewContent: newText}, nil
}
