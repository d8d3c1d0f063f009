package files

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func rows(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "row %d\n", i)
	}
	return b.String()
}

func TestEdit_ReplaceInsertUndoSequence(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/b"
	writeFiles(t, dir, map[string]string{"b": rows(20)})
	ed := newTestEditor(t, dir)
	ctx := context.Background()

	res, err := ed.Do(ctx, EditRequest{Command: CmdStrReplace, Path: p, OldStr: sp("row 10\n"), NewStr: sp("r10\nr10b\n")})
	require.NoError(t, err)
	assert.Equal(t, "The file "+p+" has been edited. Here's the result of running `cat -n` on a snippet of "+p+":\n"+
		"     7\trow 7\n     8\trow 8\n     9\trow 9\n    10\tr10\n    11\tr10b\n    12\trow 11\n    13\trow 12\n    14\trow 13\n    15\trow 14\n    16\trow 15\n    17\t\n"+
		"Review the changes and make sure they are as expected. Edit the file again if necessary.", res.Output)
	assert.Equal(t, "--- "+p+"\n+++ "+p+"\n@@ -10 +10,2 @@\n-row 10\n+r10\n+r10b", Diff(p, res.OldContent, res.NewContent))
	afterReplace := strings.Replace(rows(20), "row 10\n", "r10\nr10b\n", 1)
	assert.Equal(t, afterReplace, readFile(t, p))

	res, err = ed.Do(ctx, EditRequest{Command: CmdInsert, Path: p, InsertLine: Line(3), NewStr: sp("ins\nins2")})
	require.NoError(t, err)
	assert.Equal(t, "The file "+p+" has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n"+
		"     1\trow 1\n     2\trow 2\n     3\trow 3\n     4\tins\n     5\tins2\n     6\trow 4\n     7\trow 5\n     8\trow 6\n     9\trow 7\n    10\t\n"+
		"Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.", res.Output)
	assert.Equal(t, "--- "+p+"\n+++ "+p+"\n@@ -3,0 +4,2 @@\n+ins\n+ins2", Diff(p, res.OldContent, res.NewContent))

	res, err = ed.Do(ctx, EditRequest{Command: CmdUndoEdit, Path: p})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(res.Output, "Last edit to "+p+" undone successfully. Here's the result of running `cat -n` on "+p+":\n     1\trow 1\n"))
	assert.True(t, strings.HasSuffix(res.Output, "    21\trow 20\n    22\t\n"))
	assert.Equal(t, "--- "+p+"\n+++ "+p+"\n@@ -4,2 +3,0 @@\n-ins\n-ins2", Diff(p, res.OldContent, res.NewContent))
	assert.Equal(t, afterReplace, readFile(t, p))

	_, err = ed.Do(ctx, EditRequest{Command: CmdUndoEdit, Path: p})
	require.NoError(t, err)
	assert.Equal(t, rows(20), readFile(t, p))
	assert.Equal(t, "ERROR:\nNo edit history found for "+p+".", run(t, ed, EditRequest{Command: CmdUndoEdit, Path: p}))
}

func TestStrReplace_Errors(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/t.txt"
	content := "line1\nline2\nline3\n"
	tests := []struct {
		name string
		req  EditRequest
		want string
	}{
		{"missing old_str", EditRequest{NewStr: sp("x")}, "ERROR:\nParameter `old_str` is required for command: str_replace."},
		{"same strings", EditRequest{OldStr: sp("x"), NewStr: sp("x")},
			"ERROR:\nInvalid `new_str` parameter: x. No replacement was performed. `new_str` and `old_str` must be different."},
		{"not found shows the stripped text", EditRequest{OldStr: sp("  nothere\n"), NewStr: sp("x")},
			"ERROR:\nNo replacement was performed, old_str `nothere` did not appear verbatim in " + p + "."},
		{"multiple occurrences", EditRequest{OldStr: sp("line"), NewStr: sp("x")},
			"ERROR:\nNo replacement was performed. Multiple occurrences of old_str `line` in lines [1, 2, 3]. Please ensure it is unique."},
		{"empty old_str matches every line", EditRequest{OldStr: sp(""), NewStr: sp("x")},
			"ERROR:\nNo replacement was performed. Multiple occurrences of old_str `` in lines [1, 2, 3, 4]. Please ensure it is unique."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeFiles(t, dir, map[string]string{"t.txt": content})
			tt.req.Command, tt.req.Path = CmdStrReplace, p
			assert.Equal(t, tt.want, run(t, newTestEditor(t, dir), tt.req))
			assert.Equal(t, content, readFile(t, p), "file untouched")
		})
	}
}

func TestStrReplace_Matching(t *testing.T) {
	tests := []struct {
		name, content, old string
		new                *string
		want               string
		output             string
	}{
		{"stripped retry strips new_str too", "a\nline3\n", "  line3  \n", sp("  L3  "), "a\nL3\n", ""},
		{"null new_str deletes", "a\nb\nc\n", "b\n", nil, "a\nc\n", ""},
		{"replace in empty file", "", "", sp("x"), "x", ""},
		{"multi-line old_str", "ab\nab ab\nx\n", "ab\nab ab", sp("c"), "c\nx\n", ""},
		{"lines listed once each", "ab ab\nx\nab\n", "ab", sp("c"), "ab ab\nx\nab\n",
			"ERROR:\nNo replacement was performed. Multiple occurrences of old_str `ab` in lines [1, 3]. Please ensure it is unique."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"f": tt.content})
			out := run(t, newTestEditor(t, dir), EditRequest{Command: CmdStrReplace, Path: dir + "/f", OldStr: &tt.old, NewStr: tt.new})
			if tt.output != "" {
				assert.Equal(t, tt.output, out)
			} else {
				assert.Contains(t, out, "has been edited")
			}
			assert.Equal(t, tt.want, readFile(t, dir+"/f"))
		})
	}
}

func TestInsert(t *testing.T) {
	tests := []struct {
		name, content string
		line          *InsertLine
		newStr        *string
		wantFile      string
		wantOut       string // exact when it starts with "ERROR", else a substring
	}{
		{"at top", "a\nb\n", Line(0), sp("top"), "top\na\nb\n", "     1\ttop\n     2\ta\n     3\tb\n     4\t\n"},
		{"at end", "a\nb\n", Line(2), sp("z"), "a\nb\nz\n", "     1\ta\n     2\tb\n     3\tz\n     4\t\n"},
		{"numeric string", "a\nb\n", il("1"), sp("s"), "a\ns\nb\n", "     2\ts\n"},
		{"string with spaces and underscore", "a\nb\n", il(" 0_0 "), sp("s"), "s\na\nb\n", "     1\ts\n"},
		{"glues onto an unterminated last line", "one\ntwo", Line(2), sp("three"), "one\ntwothree\n", "     2\ttwothree\n"},
		{"empty new_str adds an empty line", "a\n", Line(1), sp(""), "a\n\n", "     2\t\n"},
		{"past the end", "a\nb\n", Line(3), sp("x"), "a\nb\n",
			"ERROR:\nInvalid `insert_line` parameter: 3. It should be within the range of allowed values: [0, 2]"},
		{"negative", "a\nb\n", Line(-1), sp("x"), "a\nb\n",
			"ERROR:\nInvalid `insert_line` parameter: -1. It should be within the range of allowed values: [0, 2]"},
		{"missing insert_line", "a\n", nil, sp("x"), "a\n", "ERROR:\nParameter `insert_line` is required for command: insert."},
		{"missing new_str", "a\n", Line(0), nil, "a\n", "ERROR:\nParameter `new_str` is required for command: insert."},
		{"non-numeric string", "a\n", il("two"), sp("x"), "a\n", "ERROR:\nInvalid insert_line value: 'two'. Expected an integer."},
		{"decimal string", "a\n", il("1.5"), sp("x"), "a\n", "ERROR:\nInvalid insert_line value: '1.5'. Expected an integer."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"f": tt.content})
			out := run(t, newTestEditor(t, dir), EditRequest{Command: CmdInsert, Path: dir + "/f", InsertLine: tt.line, NewStr: tt.newStr})
			if strings.HasPrefix(tt.wantOut, "ERROR") {
				assert.Equal(t, tt.wantOut, out)
			} else {
				assert.Contains(t, out, tt.wantOut)
			}
			assert.Equal(t, tt.wantFile, readFile(t, dir+"/f"))
		})
	}
}

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	ed := newTestEditor(t, dir)
	p := dir + "/n.txt"
	res, err := ed.Do(context.Background(), EditRequest{Command: CmdCreate, Path: p, FileText: sp("hello\nworld")})
	require.NoError(t, err)
	assert.Equal(t, "File created successfully at: "+p, res.Output)
	assert.Equal(t, "hello\nworld", readFile(t, p), "written exactly, no newline added")
	assert.Equal(t, "--- "+p+"\n+++ "+p+"\n@@ -1 +1,2 @@\n-\n+hello\n+world", Diff(p, res.OldContent, res.NewContent))

	tests := []struct {
		name string
		req  EditRequest
		want string
	}{
		{"existing file", EditRequest{Path: p, FileText: sp("x")},
			"ERROR:\nInvalid `path` parameter: " + p + ". File already exists at: " + p + ". Cannot overwrite files using command `create`."},
		{"missing file_text", EditRequest{Path: dir + "/n2.txt"}, "ERROR:\nParameter `file_text` is required for command: create."},
		{"missing parent", EditRequest{Path: dir + "/no/x.txt", FileText: sp("a")},
			"ERROR:\nRan into [Errno 2] No such file or directory: '" + dir + "/no/x.txt' while trying to write to " + dir + "/no/x.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Command = CmdCreate
			assert.Equal(t, tt.want, run(t, ed, tt.req))
		})
	}

	// The history holds the created text: undo restores it.
	run(t, ed, EditRequest{Command: CmdStrReplace, Path: p, OldStr: sp("hello"), NewStr: sp("bye")})
	assert.Equal(t, "Last edit to "+p+" undone successfully. Here's the result of running `cat -n` on "+p+":\n     1\thello\n     2\tworld\n",
		run(t, ed, EditRequest{Command: CmdUndoEdit, Path: p}))
	assert.Equal(t, "Last edit to "+p+" undone successfully. Here's the result of running `cat -n` on "+p+":\n     1\thello\n     2\tworld\n",
		run(t, ed, EditRequest{Command: CmdUndoEdit, Path: p}))
}

func TestEdit_PathValidation(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"d/a": "x", "x.docx": "hello", "x.PDF": "hi", ".docx": "hello"})
	ed := newTestEditor(t, dir)
	tests := []struct {
		name string
		req  EditRequest
		want string
	}{
		{"directory", EditRequest{Command: CmdStrReplace, Path: dir + "/d", OldStr: sp("a")},
			"ERROR:\nInvalid `path` parameter: " + dir + "/d. The path " + dir + "/d is a directory and only the `view` command can be used on directories."},
		{"document type", EditRequest{Command: CmdStrReplace, Path: dir + "/x.docx", OldStr: sp("a")},
			"ERROR:\nInvalid `path` parameter: " + dir + "/x.docx. The path " + dir + "/x.docx points to a binary file (.docx) and only the `view` command can be used on supported binary files."},
		{"document type keeps the suffix's case", EditRequest{Command: CmdInsert, Path: dir + "/x.PDF", InsertLine: Line(0), NewStr: sp("a")},
			"ERROR:\nInvalid `path` parameter: " + dir + "/x.PDF. The path " + dir + "/x.PDF points to a binary file (.PDF) and only the `view` command can be used on supported binary files."},
		{"unknown command on a directory", EditRequest{Command: "bogus", Path: dir + "/d"},
			"ERROR:\nInvalid `path` parameter: " + dir + "/d. The path " + dir + "/d is a directory and only the `view` command can be used on directories."},
		{"unknown command", EditRequest{Command: "bogus", Path: dir + "/d/a"},
			"ERROR:\nUnrecognized command bogus. The allowed commands for the oh_editor tool are: view, create, str_replace, insert, undo_edit"},
		{"missing", EditRequest{Command: CmdStrReplace, Path: dir + "/nope", OldStr: sp("a")},
			"ERROR:\nInvalid `path` parameter: " + dir + "/nope. The path " + dir + "/nope does not exist. Please provide a valid path."},
		{"empty path", EditRequest{Command: CmdView, Path: ""},
			"ERROR:\nInvalid `path` parameter: .. The path should be an absolute path, starting with `/`. Maybe you meant " + dir + "?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, run(t, ed, tt.req))
		})
	}
	assert.Contains(t, run(t, ed, EditRequest{Command: CmdStrReplace, Path: dir + "/.docx", OldStr: sp("hello"), NewStr: sp("bye")}),
		"has been edited", "a dotfile named .docx has no suffix")
}

func TestUndo_KeepsTenStepsPerFile(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/f"
	writeFiles(t, dir, map[string]string{"f": "v0"})
	ed := newTestEditor(t, dir)
	for i := 1; i <= 12; i++ {
		out := run(t, ed, EditRequest{Command: CmdStrReplace, Path: p, OldStr: sp(fmt.Sprintf("v%d", i-1)), NewStr: sp(fmt.Sprintf("v%d", i))})
		require.Contains(t, out, "has been edited")
	}
	for i := 11; i >= 2; i-- {
		run(t, ed, EditRequest{Command: CmdUndoEdit, Path: p})
		assert.Equal(t, fmt.Sprintf("v%d", i), readFile(t, p))
	}
	assert.Equal(t, "ERROR:\nNo edit history found for "+p+".", run(t, ed, EditRequest{Command: CmdUndoEdit, Path: p}))
}

func TestEdit_KeepsEncodingLineEndingsAndMode(t *testing.T) {
	dir := t.TempDir()
	latin := "Caf\xe9 cr\xe8me br\xfbl\xe9e\nna\xefve fa\xe7ade\n"
	writeFiles(t, dir, map[string]string{"l.txt": latin, "c.txt": "a\r\nb\r\n", "x.sh": "echo hi\n"})
	require.NoError(t, os.Chmod(dir+"/x.sh", 0o751))
	ed := newTestEditor(t, dir)

	assert.Equal(t, "Here's the result of running `cat -n` on "+dir+"/l.txt:\n     1\tCafé crème brûlée\n     2\tnaïve façade\n     3\t\n",
		run(t, ed, EditRequest{Command: CmdView, Path: dir + "/l.txt"}))
	assert.Contains(t, run(t, ed, EditRequest{Command: CmdStrReplace, Path: dir + "/l.txt", OldStr: sp("naïve"), NewStr: sp("naïf")}), "has been edited")
	assert.Equal(t, "Caf\xe9 cr\xe8me br\xfbl\xe9e\nna\xeff fa\xe7ade\n", readFile(t, dir+"/l.txt"), "still Latin-1, other bytes untouched")
	assert.Equal(t, "ERROR:\nRan into 'latin-1' codec can't encode character '\\u2192' in position 3: ordinal not in range(256) while trying to write to "+dir+"/l.txt",
		run(t, ed, EditRequest{Command: CmdStrReplace, Path: dir + "/l.txt", OldStr: sp("Café"), NewStr: sp("Caf→")}))

	run(t, ed, EditRequest{Command: CmdStrReplace, Path: dir + "/c.txt", OldStr: sp("b"), NewStr: sp("B")})
	assert.Equal(t, "a\r\nB\r\n", readFile(t, dir+"/c.txt"), "CRLF kept")

	run(t, ed, EditRequest{Command: CmdInsert, Path: dir + "/x.sh", InsertLine: Line(0), NewStr: sp("#!/bin/sh")})
	fi, err := os.Stat(dir + "/x.sh")
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o751), fi.Mode().Perm())
}

func TestEditor_ConcurrentCallsAreSafe(t *testing.T) {
	dir := t.TempDir()
	ed := newTestEditor(t, dir)
	var wg sync.WaitGroup
	for i := range 8 {
		name := fmt.Sprintf("%s/f%d", dir, i)
		writeFiles(t, dir, map[string]string{fmt.Sprintf("f%d", i): "a\n"})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				ed.Do(context.Background(), EditRequest{Command: CmdInsert, Path: name, InsertLine: Line(j), NewStr: sp("x")})
			}
		}()
	}
	wg.Wait()
	for i := range 8 {
		assert.Equal(t, "x\nx\nx\nx\nx\na\n", readFile(t, fmt.Sprintf("%s/f%d", dir, i)))
	}
}

func TestDiff(t *testing.T) {
	tests := []struct{ name, old, new, want string }{
		{"no change", "a\nb", "a\nb", ""},
		{"both empty", "", "", ""},
		{"trailing whitespace trimmed", "a\n", "a  \n", "--- f\n+++ f\n@@ -1 +1 @@\n-a\n+a"},
		{"two hunks", "1\n2\n3\n4\n5\n", "1\nX\n3\n4\nY\n", "--- f\n+++ f\n@@ -2 +2 @@\n-2\n+X\n@@ -5 +5 @@\n-5\n+Y"},
		{"deletion range", "a\nb\nc", "a\nc", "--- f\n+++ f\n@@ -2 +1,0 @@\n-b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Diff("f", tt.old, tt.new))
		})
	}
}
