package agentskills_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/plugins"
)

// numbered renders lines first..last of a file whose line n is "l<n>", as
// the window shows them.
func numbered(first, last int) string {
	var b strings.Builder
	for n := first; n <= last; n++ {
		fmt.Fprintf(&b, "%d|l%d\n", n, n)
	}
	return b.String()
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

// step is one cell and what it must print; the steps of a test share the
// kernel, so the open file and window position carry over.
type step struct {
	name, code, want string
}

func runSteps(t *testing.T, k *kernel, steps []step) {
	t.Helper()
	for _, s := range steps {
		assert.Equal(t, s.want, k.run(t, s.code), s.name)
	}
}

func TestWindow_OpenScrollAndGotoOnALongFile(t *testing.T) {
	k := startKernel(t, plugins.Env{})
	long := filepath.Join(k.cwd, "long.txt")
	var text strings.Builder
	for n := 1; n <= 250; n++ {
		fmt.Fprintf(&text, "l%d\n", n)
	}
	writeFile(t, long, text.String())
	header := "[File: " + long + " (250 lines total)]\n"
	hint := "\n[Use `scroll_down` to view the next 100 lines of the file!]"

	runSteps(t, k, []step{
		{"nothing open yet: goto", "goto_line(1)", "ERROR: No file open. Use the open_file function first."},
		{"nothing open yet: scroll", "scroll_down()", "ERROR: No file open. Use the open_file function first."},
		{"nothing open yet: search", "search_file('l1')", "ERROR: No file specified or open. Use the open_file function first."},
		{"open at the top, relative path", "open_file('long.txt')",
			header + "(this is the beginning of the file)\n" + numbered(1, 100) + "(150 more lines below)" + hint},
		{"scroll down starts at the line 100 further", "scroll_down()",
			header + "(100 more lines above)\n" + numbered(101, 201) + "(49 more lines below)"},
		{"scroll down to the end keeps a full window", "scroll_down()",
			header + "(150 more lines above)\n" + numbered(151, 250) + "(this is the end of the file)"},
		{"scroll up", "scroll_up()",
			header + "(100 more lines above)\n" + numbered(101, 201) + "(49 more lines below)"},
		{"goto centres the line", "goto_line(120)",
			header + "(69 more lines above)\n" + numbered(70, 170) + "(80 more lines below)"},
		{"goto past the end", "goto_line(251)", "ERROR: Line number must be between 1 and 250."},
		{"goto zero", "goto_line(0)", "ERROR: Line number must be between 1 and 250."},
		{"open with a small context", "open_file(" + py(long) + ", 240, 10)",
			header + "(234 more lines above)\n" + numbered(235, 245) + "(5 more lines below)" + hint},
		{"open near the end", "open_file(" + py(long) + ", 249)",
			header + "(150 more lines above)\n" + numbered(151, 250) + "(this is the end of the file)"},
		{"open line out of range has no period", "open_file(" + py(long) + ", 0)",
			"ERROR: Line number must be between 1 and 250"},
		{"open line not an int", "open_file(" + py(long) + ", None)",
			"ERROR: Line number must be between 1 and 250"},
		{"open a missing file", "open_file('missing.txt')", "ERROR: File missing.txt not found."},
		{"open a directory", "open_file(" + py(k.cwd) + ")", "ERROR: File " + k.cwd + " not found."},
		{"search the open file", "search_file('l24')",
			"[Found 11 matches for \"l24\" in " + long + "]\n" +
				"Line 24: l24\nLine 240: l240\nLine 241: l241\nLine 242: l242\nLine 243: l243\nLine 244: l244\n" +
				"Line 245: l245\nLine 246: l246\nLine 247: l247\nLine 248: l248\nLine 249: l249\n" +
				"[End of matches for \"l24\" in " + long + "]"},
		// The failed opens left the window where open_file(long, 249)
		// put it; scrolling starts the window at the line it moves to.
		{"scroll up from line 249, helpers return None", "print(repr(scroll_up()))",
			header + "(148 more lines above)\n" + numbered(149, 249) + "(1 more lines below)\nNone"},
	})
}

func TestWindow_ShortFiles(t *testing.T) {
	k := startKernel(t, plugins.Env{})
	five := filepath.Join(k.cwd, "five.py")
	writeFile(t, five, "l1\nl2\nl3\nl4\nl5") // no final newline
	empty := filepath.Join(k.cwd, "empty.txt")
	writeFile(t, empty, "")
	crlf := filepath.Join(k.cwd, "crlf.txt")
	writeFile(t, crlf, "l1\r\nl2\r\n")

	runSteps(t, k, []step{
		{"whole file fits", "open_file('five.py')",
			"[File: " + five + " (5 lines total)]\n(this is the beginning of the file)\n" + numbered(1, 5) + "(this is the end of the file)"},
		{"centred on the last line", "open_file('five.py', 5, 2)",
			"[File: " + five + " (5 lines total)]\n(3 more lines above)\n" + numbered(4, 5) + "(this is the end of the file)"},
		{"scrolling a short file stays put", "scroll_down()",
			"[File: " + five + " (5 lines total)]\n(this is the beginning of the file)\n" + numbered(1, 5) + "(this is the end of the file)"},
		{"empty file has one line", "open_file('empty.txt')",
			"[File: " + empty + " (1 lines total)]\n(this is the beginning of the file)\n1|\n(this is the end of the file)"},
		{"CRLF lines are shown without the CR", "open_file('crlf.txt')",
			"[File: " + crlf + " (2 lines total)]\n(this is the beginning of the file)\n" + numbered(1, 2) + "(this is the end of the file)"},
	})
}

func TestSearch_DirFileAndFind(t *testing.T) {
	k := startKernel(t, plugins.Env{})
	dir := filepath.Join(k.cwd, "proj")
	writeFile(t, filepath.Join(dir, "a.txt"), "alpha\nneedle one\n   needle two  \n")
	writeFile(t, filepath.Join(dir, ".hidden"), "needle\n")
	writeFile(t, filepath.Join(dir, "sub", "b.md"), "needle\n")
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "sub", "needle.fifo"), 0o644))
	many := filepath.Join(k.cwd, "many")
	for i := range 101 {
		writeFile(t, filepath.Join(many, fmt.Sprintf("f%03d.txt", i)), "needle\n")
	}
	a := filepath.Join(dir, "a.txt")

	runSteps(t, k, []step{
		{"dir: matches in order, hidden files and pipes skipped", "search_dir('needle', " + py(dir) + ")",
			"[Found 3 matches for \"needle\" in " + dir + "]\n" +
				dir + "/a.txt (Line 2): needle one\n" +
				dir + "/a.txt (Line 3): needle two\n" +
				dir + "/sub/b.md (Line 1): needle\n" +
				"[End of matches for \"needle\" in " + dir + "]"},
		{"dir: no match has no brackets", "search_dir('zzz', " + py(dir) + ")",
			"No matches found for \"zzz\" in " + dir},
		{"dir: missing", "search_dir('x', '/nonexistent/dir')", "ERROR: Directory /nonexistent/dir not found"},
		{"dir: more than 100 files", "search_dir('needle', 'many')",
			"More than 101 files matched for \"needle\" in many. Please narrow your search."},
		{"dir: default is the current directory", "search_dir('alpha')",
			"[Found 1 matches for \"alpha\" in ./]\n./proj/a.txt (Line 1): alpha\n[End of matches for \"alpha\" in ./]"},
		{"file: matches", "search_file('needle', " + py(a) + ")",
			"[Found 2 matches for \"needle\" in " + a + "]\nLine 2: needle one\nLine 3: needle two\n[End of matches for \"needle\" in " + a + "]"},
		{"file: no match", "search_file('zzz', " + py(a) + ")", "[No matches found for \"zzz\" in " + a + "]"},
		{"file: missing", "search_file('x', 'nope.txt')", "ERROR: File nope.txt not found."},
		{"find: substring of the name, pipes included", "find_file('needle', 'proj')",
			"[Found 1 matches for \"needle\" in proj]\nproj/sub/needle.fifo\n[End of matches for \"needle\" in proj]"},
		{"find: default directory", "find_file('b.md')",
			"[Found 1 matches for \"b.md\" in ./]\n./proj/sub/b.md\n[End of matches for \"b.md\" in ./]"},
		{"find: no match", "find_file('zzz', " + py(dir) + ")", "[No matches found for \"zzz\" in " + dir + "]"},
		{"find: missing directory", "find_file('x', 'nope')", "ERROR: Directory nope not found"},
	})
}
