package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// view shows a file with line numbers, a supported document as Markdown, or
// a directory two levels deep.
func (e *Editor) view(ctx context.Context, p string, viewRange []int) (EditResult, error) {
	if isDir(p) {
		if len(viewRange) > 0 {
			return EditResult{}, invalidParam("view_range", pyIntList(viewRange), "The `view_range` parameter is not allowed when `path` points to a directory.")
		}
		out, err := viewDir(ctx, p)
		return EditResult{Output: out}, err
	}
	if err := e.validateFile(p); err != nil {
		return EditResult{}, err
	}
	if isSupportedBinary(p) {
		md, err := convertToMarkdown(p)
		if err != nil {
			return EditResult{}, errorf(err, "Error in converting file to Markdown: %v. Please use Python code to read %s", err, p)
		}
		md = truncateChars(md, maxResponseChars, noticeBinary)
		return EditResult{Output: fmt.Sprintf("Here's the content of the file %s displayed in Markdown format:\n%s\n", p, md)}, nil
	}
	f, err := e.readText(p)
	if err != nil {
		return EditResult{}, err
	}
	if len(viewRange) == 0 {
		return EditResult{Output: makeOutput(f.text, p, 1)}, nil
	}

	numLines := countLines(f.text)
	if len(viewRange) != 2 {
		return EditResult{}, invalidParam("view_range", pyIntList(viewRange), "It should be a list of two integers.")
	}
	start, end := viewRange[0], viewRange[1]
	if start < 1 || start > numLines {
		return EditResult{}, invalidParam("view_range", pyIntList(viewRange),
			fmt.Sprintf("Its first element `%d` should be within the range of lines of the file: %s.", start, pyIntList([]int{1, numLines})))
	}
	note := ""
	switch {
	case end == -1:
		end = numLines
	case end > numLines:
		note = fmt.Sprintf("NOTE: We only show up to %d since there're only %d lines in this file.\n", numLines, numLines)
		end = numLines
	}
	if end < start {
		return EditResult{}, invalidParam("view_range", pyIntList(viewRange),
			fmt.Sprintf("Its second element `%d` should be greater than or equal to the first element `%d`.", end, start))
	}
	lines := pySplitlines(linesRange(f.text, start, end))
	return EditResult{Output: note + makeOutput(strings.Join(lines, "\n"), p, start)}, nil
}

// viewDir lists root and the entries up to two levels below it, hidden ones
// (any component starting with ".") left out, sorted bytewise, directories
// marked with "/", the way `find -L root -maxdepth 2 ... | sort` prints
// them; a count of hidden entries directly in root follows. Unreadable
// directories make the whole answer an error, as find's stderr did.
func viewDir(ctx context.Context, root string) (string, error) {
	var paths []string
	var stderr strings.Builder
	hidden := 0

	join := func(dir, name string) string {
		if strings.HasSuffix(dir, "/") {
			return dir + name
		}
		return dir + "/" + name
	}
	list := func(dir string) []fs.DirEntry {
		entries, err := os.ReadDir(dir)
		if err != nil {
			fmt.Fprintf(&stderr, "find: %s: %s\n", pyfmt.String(dir), findErrorText(err))
		}
		return entries
	}

	paths = append(paths, root)
	for _, ent := range list(root) {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		name := ent.Name()
		if strings.HasPrefix(name, ".") {
			hidden++
			continue
		}
		child := join(root, name)
		paths = append(paths, child)
		if !isDir(child) {
			continue
		}
		for _, sub := range list(child) {
			if !strings.HasPrefix(sub.Name(), ".") {
				paths = append(paths, join(child, sub.Name()))
			}
		}
	}
	if stderr.Len() > 0 {
		return "", &Error{Msg: truncateChars(stderr.String(), maxResponseChars, noticeGeneric)}
	}

	sort.Strings(paths)
	stdout := truncateChars(strings.Join(paths, "\n")+"\n", maxResponseChars, noticeDirectory)
	var b strings.Builder
	fmt.Fprintf(&b, "Here's the files and directories up to 2 levels deep in %s, excluding hidden items:\n", root)
	if s := pyStrip(stdout); s != "" {
		for i, line := range strings.Split(s, "\n") {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(line)
			if isDir(line) {
				b.WriteByte('/')
			}
		}
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "\n\n%d hidden files/directories in this directory are excluded. You can use 'ls -la %s' to see them.", hidden, root)
	}
	return b.String(), nil
}

// findErrorText words a directory read failure as find(1) does.
func findErrorText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pyStrerrorOf(pe.Err)
	}
	return err.Error()
}
