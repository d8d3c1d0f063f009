package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestView_File(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"t.txt":  "line1\nline2\nline3\n",
		"e.txt":  "",
		"n.txt":  "a\nb",
		"ff.txt": "a\x0cb\nc\x1dd\ne\n",
		"c.txt":  "a\r\nb\r\n",
	})
	p := dir + "/t.txt"
	head := "Here's the result of running `cat -n` on " + p + ":\n"
	tests := []struct {
		name string
		req  EditRequest
		want string
	}{
		{"whole file ends with an empty numbered line", EditRequest{Path: p},
			head + "     1\tline1\n     2\tline2\n     3\tline3\n     4\t\n"},
		{"empty file", EditRequest{Path: dir + "/e.txt"},
			"Here's the result of running `cat -n` on " + dir + "/e.txt:\n     1\t\n"},
		{"no trailing newline", EditRequest{Path: dir + "/n.txt"},
			"Here's the result of running `cat -n` on " + dir + "/n.txt:\n     1\ta\n     2\tb\n"},
		{"path is normalised", EditRequest{Path: dir + "//./t.txt"},
			head + "     1\tline1\n     2\tline2\n     3\tline3\n     4\t\n"},
		{"range", EditRequest{Path: p, ViewRange: []int{2, 3}},
			head + "     2\tline2\n     3\tline3\n"},
		{"range to end", EditRequest{Path: p, ViewRange: []int{2, -1}},
			head + "     2\tline2\n     3\tline3\n"},
		{"range past end notes the clamp", EditRequest{Path: p, ViewRange: []int{2, 10}},
			"NOTE: We only show up to 3 since there're only 3 lines in this file.\n" + head + "     2\tline2\n     3\tline3\n"},
		{"empty range is the whole file", EditRequest{Path: p, ViewRange: []int{}},
			head + "     1\tline1\n     2\tline2\n     3\tline3\n     4\t\n"},
		{"range splits like splitlines", EditRequest{Path: dir + "/ff.txt", ViewRange: []int{1, 3}},
			"Here's the result of running `cat -n` on " + dir + "/ff.txt:\n     1\ta\n     2\tb\n     3\tc\n     4\td\n     5\te\n"},
		{"CRLF shown as LF", EditRequest{Path: dir + "/c.txt"},
			"Here's the result of running `cat -n` on " + dir + "/c.txt:\n     1\ta\n     2\tb\n     3\t\n"},
		{"first element out of range", EditRequest{Path: p, ViewRange: []int{0, 1}},
			"ERROR:\nInvalid `view_range` parameter: [0, 1]. Its first element `0` should be within the range of lines of the file: [1, 3]."},
		{"first element past the end", EditRequest{Path: p, ViewRange: []int{4, 4}},
			"ERROR:\nInvalid `view_range` parameter: [4, 4]. Its first element `4` should be within the range of lines of the file: [1, 3]."},
		{"second before first", EditRequest{Path: p, ViewRange: []int{3, 2}},
			"ERROR:\nInvalid `view_range` parameter: [3, 2]. Its second element `2` should be greater than or equal to the first element `3`."},
		{"three elements", EditRequest{Path: p, ViewRange: []int{1, 2, 3}},
			"ERROR:\nInvalid `view_range` parameter: [1, 2, 3]. It should be a list of two integers."},
	}
	ed := newTestEditor(t, dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Command = CmdView
			assert.Equal(t, tt.want, run(t, ed, tt.req))
		})
	}
}

func TestView_TruncatesAfter16000Characters(t *testing.T) {
	dir := t.TempDir()
	// Multi-byte characters: the limit counts characters, not bytes.
	writeFiles(t, dir, map[string]string{"u.txt": strings.Repeat("日本語\n", 6000)})
	out := run(t, newTestEditor(t, dir), EditRequest{Command: CmdView, Path: dir + "/u.txt"})
	body := strings.Repeat("日本語\n", 4000)
	want := "Here's the result of running `cat -n` on " + dir + "/u.txt:\n"
	for i, l := range strings.Split(body+noticeTextFile, "\n") {
		want += strings.Repeat(" ", 6-len(itoa(i+1))) + itoa(i+1) + "\t" + l
		if i < 4000 {
			want += "\n"
		}
	}
	assert.Equal(t, want+"\n", out)
	assert.Contains(t, out, "  4001\t<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>\n")
}

func TestView_DirectoryCountsHiddenItems(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"d/a.txt": "x", "d/.hid": "y", "d/sub/b.txt": "z", "d/sub/.h2": "q",
		"d/sub/deep/c": "c", "d/.hd/x": "x", "d/a.b": "k",
	})
	require.NoError(t, os.Mkdir(dir+"/d/Z", 0o755))
	require.NoError(t, os.Mkdir(dir+"/d/a", 0o755))
	require.NoError(t, os.Symlink("nowhere", dir+"/d/broken"))
	d := dir + "/d"
	want := "Here's the files and directories up to 2 levels deep in " + d + ", excluding hidden items:\n" +
		d + "/\n" + d + "/Z/\n" + d + "/a/\n" + d + "/a.b\n" + d + "/a.txt\n" + d + "/broken\n" +
		d + "/sub/\n" + d + "/sub/b.txt\n" + d + "/sub/deep/\n\n" +
		"2 hidden files/directories in this directory are excluded. You can use 'ls -la " + d + "' to see them."
	ed := newTestEditor(t, dir)
	assert.Equal(t, want, run(t, ed, EditRequest{Command: CmdView, Path: d}))
	assert.Equal(t, want, run(t, ed, EditRequest{Command: CmdView, Path: d + "/"}), "trailing slash")
	assert.Equal(t,
		"ERROR:\nInvalid `view_range` parameter: [1, 2]. The `view_range` parameter is not allowed when `path` points to a directory.",
		run(t, ed, EditRequest{Command: CmdView, Path: d, ViewRange: []int{1, 2}}))
}

func TestView_DirectoryWithoutHiddenItemsHasNoNote(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"test.txt": "x"})
	assert.Equal(t,
		"Here's the files and directories up to 2 levels deep in "+dir+", excluding hidden items:\n"+dir+"/\n"+dir+"/test.txt",
		run(t, newTestEditor(t, dir), EditRequest{Command: CmdView, Path: dir}))
}

func TestView_DirectoryListingIsTruncated(t *testing.T) {
	dir := t.TempDir()
	for i := range 400 {
		writeFiles(t, dir, map[string]string{filepath.Join("many", strings.Repeat("n", 40)+itoa(1000+i)): ""})
	}
	out := run(t, newTestEditor(t, dir), EditRequest{Command: CmdView, Path: dir + "/many"})
	assert.True(t, strings.HasSuffix(out, noticeDirectory), "ends with the directory notice")
}

func TestView_UnreadableDirectoriesErrorIsTruncated(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	dir := t.TempDir()
	var stderr strings.Builder
	for i := range 200 {
		sub := filepath.Join(dir, "d", strings.Repeat("u", 80)+itoa(1000+i))
		require.NoError(t, os.MkdirAll(sub, 0o755))
		require.NoError(t, os.Chmod(sub, 0))
		t.Cleanup(func() { os.Chmod(sub, 0o755) })
		fmt.Fprintf(&stderr, "find: '%s': Permission denied\n", sub)
	}
	require.Greater(t, stderr.Len(), 16000)
	out := run(t, newTestEditor(t, dir), EditRequest{Command: CmdView, Path: dir + "/d"})
	assert.Equal(t, "ERROR:\n"+stderr.String()[:16000]+
		"<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you.</NOTE>", out)
}

func TestView_Refusals(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"b.bin": strings.Repeat("\x00\x01\x02abc\xff", 10), "t.txt": "x"})
	big := dir + "/big.txt"
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("a", 11<<20)), 0o644))
	ed := newTestEditor(t, dir)
	tests := []struct {
		name, path, want string
	}{
		{"binary", dir + "/b.bin", "ERROR:\nFile validation failed for " + dir + "/b.bin: File appears to be binary and this file type cannot be read or edited by this tool."},
		{"too large", big, "ERROR:\nFile validation failed for " + big + ": File is too large (11.0MB). Maximum allowed size is 10MB."},
		{"missing", dir + "/nope", "ERROR:\nInvalid `path` parameter: " + dir + "/nope. The path " + dir + "/nope does not exist. Please provide a valid path."},
		{"relative with suggestion", "t.txt", "ERROR:\nInvalid `path` parameter: t.txt. The path should be an absolute path, starting with `/`. Maybe you meant " + dir + "/t.txt?"},
		{"relative without suggestion", "nope.txt", "ERROR:\nInvalid `path` parameter: nope.txt. The path should be an absolute path, starting with `/`."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, run(t, ed, EditRequest{Command: CmdView, Path: tt.path}))
		})
	}
}
