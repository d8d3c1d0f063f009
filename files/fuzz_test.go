package files

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/actionserver/actionserver/internal/chown"
)

// FuzzExtractZip feeds arbitrary archives to ExtractZip: it must never
// panic, and whatever it does, nothing may appear outside the destination.
func FuzzExtractZip(f *testing.F) {
	for _, entries := range [][]zipEntry{
		{{name: "a.txt", body: "x"}, {name: "dir/b.txt", body: "y"}},
		{{name: "../evil", body: "x"}},
		{{name: "link", body: "../../etc", mode: fs.ModeSymlink | 0o777}, {name: "link/x", body: "y"}},
		{{name: "d/"}, {name: "d/l", body: "/", mode: fs.ModeSymlink | 0o777}},
		{{name: "s", body: ".", mode: fs.ModeSymlink | 0o777}, {name: "s/t/l", body: "../..", mode: fs.ModeSymlink | 0o777}},
		{{name: "s", body: ".", mode: fs.ModeSymlink | 0o777}, {name: "l", body: "s/..", mode: fs.ModeSymlink | 0o777}},
	} {
		data, err := os.ReadFile(makeZip(f, entries...))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("PK\x03\x04 not really a zip"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dest := filepath.Join(parent, "dest")
		if err := os.Mkdir(dest, 0o755); err != nil {
			t.Fatal(err)
		}
		zipPath := filepath.Join(t.TempDir(), "in.zip")
		if err := os.WriteFile(zipPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = ExtractZip(context.Background(), zipPath, dest, chown.Keep)
		entries, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "dest" {
			names := []string{}
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("extraction wrote outside the destination: %v", names)
		}
		// A link pointing out writes nothing yet, but the next write
		// through it would.
		if out := linksLeaving(t, dest); len(out) > 0 {
			t.Fatalf("extraction left symlinks leading out of the destination: %v", out)
		}
	})
}

// FuzzStrReplace checks the editor's str_replace against a plain model:
// exactly one occurrence is replaced, anything else leaves the file
// untouched, and undo restores the original.
func FuzzStrReplace(f *testing.F) {
	f.Add("line one\nline two\n", "two", "2")
	f.Add("a\na\n", "a", "b")
	f.Add("  indented  \n", "indented", "x")
	f.Add("tabs\tand\r\nCRLF\n", "and\r", "&")
	f.Add("ünïcödé ✓\n", "✓", "✗")
	f.Fuzz(func(t *testing.T, content, old, new string) {
		if old == new || !strings.Contains(content, old) || old == "" {
			return // other paths: covered by the editor's unit tests
		}
		if !utf8.ValidString(content) || !utf8.ValidString(old) || !utf8.ValidString(new) {
			return // JSON delivers only valid UTF-8 strings to the editor
		}
		p := filepath.Join(t.TempDir(), "f.txt")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		ed := NewEditor("")
		defer ed.Close()
		ctx := context.Background()
		_, err := ed.Do(ctx, EditRequest{Command: CmdStrReplace, Path: p, OldStr: &old, NewStr: &new})
		got, rerr := os.ReadFile(p)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			if _, ok := IsError(err); !ok {
				t.Fatalf("server fault: %v", err)
			}
			if string(got) != content {
				t.Fatalf("a refused edit changed the file")
			}
			return
		}
		if strings.Count(content, old) == 1 && IsBinary(p) == false {
			want := strings.Replace(content, old, new, 1)
			if string(got) != want && !strings.ContainsAny(content, "\r\x00") {
				t.Fatalf("replace %q with %q in %q: got %q, want %q", old, new, content, got, want)
			}
		}
		if IsBinary(p) {
			return // the edit made it look binary: the editor refuses it now, as upstream's does
		}
		if _, err := ed.Do(ctx, EditRequest{Command: CmdUndoEdit, Path: p}); err != nil {
			t.Fatalf("undo: %v", err)
		}
		back, _ := os.ReadFile(p)
		if string(back) != content && !strings.ContainsAny(content, "\r\x00") {
			t.Fatalf("undo gave %q, want %q", back, content)
		}
	})
}

// FuzzEditorOps runs a sequence of editor commands (create, insert,
// str_replace, view, undo_edit) on one file and checks each against a plain
// model of the file and its undo stack. Every op byte picks a command (byte
// % 5) and its numeric argument (byte / 5). For text outside the model
// (invalid UTF-8, carriage returns, control characters) only the
// invariants are checked: no server fault, and a refused or read-only
// command leaves the file's bytes as they were.
func FuzzEditorOps(f *testing.F) {
	const (
		opCreate = iota
		opInsert
		opReplace
		opView
		opUndo
		numOps
	)
	op := func(kind, arg int) byte { return byte(arg*numOps + kind) }
	f.Add("one\ntwo\nthree\n", "two", "2", []byte{op(opReplace, 0), op(opView, 0), op(opUndo, 0), op(opUndo, 0)})
	f.Add("no newline at end", "x", "inserted", []byte{op(opInsert, 1), op(opInsert, 0), op(opView, 2), op(opUndo, 0)})
	f.Add("", "created\nfile", "more", []byte{op(opCreate, 0), op(opInsert, 2), op(opUndo, 0), op(opUndo, 0), op(opUndo, 0)})
	f.Add("a\na\n", "a", "b", []byte{op(opReplace, 0), op(opInsert, 9), op(opView, 5)})
	f.Add("  padded  \n", " padded\n", "trimmed", []byte{op(opReplace, 0), op(opUndo, 0)})
	f.Add("ünï\ttabs ✓\n", "✓", "✗", []byte{op(opReplace, 0), op(opCreate, 0), op(opView, 1)})
	f.Add("crlf\r\nline\r\n", "line", "LINE", []byte{op(opReplace, 0), op(opView, 0), op(opUndo, 0)})
	f.Fuzz(func(t *testing.T, initial, a, b string, ops []byte) {
		if len(ops) > 24 {
			ops = ops[:24] // room to fill the undo history (10 steps) and empty it
		}
		clean := modelText(initial) && modelText(a) && modelText(b)
		p := filepath.Join(t.TempDir(), "f.txt")
		if err := os.WriteFile(p, []byte(initial), 0o644); err != nil {
			t.Fatal(err)
		}
		ed := NewEditor("")
		defer ed.Close()
		ctx := context.Background()
		content := initial // the model: the file's text ...
		var undo []string  // ... and the editor's undo stack for it
		push := func(s string) {
			undo = append(undo, s)
			if len(undo) > maxHistoryPerFile {
				undo = undo[1:]
			}
		}
		for i, o := range ops {
			kind, arg := int(o)%numOps, int(o)/numOps
			before, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			req := EditRequest{Path: p}
			var want string // the file's text if the command succeeds
			wantOK := true  // whether the model expects success
			switch kind {
			case opCreate:
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				before = nil
				req.Command, req.FileText, want = CmdCreate, &a, a
			case opInsert:
				n := arg % (countLines(content) + 2) // sometimes one past the end
				req.Command, req.InsertLine, req.NewStr = CmdInsert, Line(n), &b
				want, wantOK = modelInsert(content, n, b)
			case opReplace:
				old, repl := a, b
				if arg%2 == 1 {
					old, repl = b, a
				}
				req.Command, req.OldStr, req.NewStr = CmdStrReplace, &old, &repl
				want, wantOK = modelReplace(content, old, repl)
			case opView:
				req.Command, want = CmdView, content
				if arg%3 != 0 {
					n := countLines(content)
					req.ViewRange = []int{1 + arg%(n+1), arg%(n+2) - 1} // 0 means -1: to the end
					wantOK = modelViewRange(n, req.ViewRange)
				}
			case opUndo:
				req.Command = CmdUndoEdit
				wantOK = len(undo) > 0
				if wantOK {
					want = undo[len(undo)-1]
				}
			}
			if kind != opCreate && IsBinary(p) {
				// binaryornot's verdict (a few multi-byte characters can
				// look binary, upstream too): every command refuses it.
				wantOK = false
			}
			res, err := ed.Do(ctx, req)
			got, rerr := os.ReadFile(p)
			if rerr != nil && !(kind == opCreate && err != nil) {
				t.Fatalf("op %d (%s): read back: %v", i, req.Command, rerr)
			}
			if err != nil {
				if _, ok := IsError(err); !ok {
					t.Fatalf("op %d (%s): server fault: %v", i, req.Command, err)
				}
				if !bytes.Equal(got, before) {
					t.Fatalf("op %d (%s) was refused (%v) but changed the file from %q to %q", i, req.Command, err, before, got)
				}
			} else if kind == opView && !bytes.Equal(got, before) {
				t.Fatalf("op %d: view changed the file from %q to %q", i, before, got)
			}
			if !clean {
				if kind == opCreate && err != nil {
					return // the file is gone; nothing more to check
				}
				continue
			}
			if (err == nil) != wantOK {
				t.Fatalf("op %d (%s %+v) on %q: got error %v, model expects success %v", i, req.Command, req, content, err, wantOK)
			}
			if err != nil {
				continue
			}
			if string(got) != want {
				t.Fatalf("op %d (%s %+v) on %q: file is %q, want %q", i, req.Command, req, content, got, want)
			}
			switch kind {
			case opCreate:
				push(a) // upstream keeps the created text itself as its first undo step
			case opInsert, opReplace:
				push(content)
			case opUndo:
				undo = undo[:len(undo)-1]
			case opView:
				checkViewOutput(t, res.Output, content, req.ViewRange)
			}
			content = want
		}
	})
}

// modelText reports whether s is text the model in FuzzEditorOps predicts
// exactly: valid UTF-8 of printable characters, tabs and newlines only.
func modelText(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || (r != '\n' && r != '\t' && !unicode.IsPrint(r)) {
			return false
		}
	}
	return true
}

// modelInsert puts newStr and a newline after line n of content (0 = at
// the top); a last line without a newline gets newStr glued to it, as
// upstream does.
func modelInsert(content string, n int, newStr string) (string, bool) {
	lines := strings.SplitAfter(content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if n < 0 || n > len(lines) {
		return "", false
	}
	head := strings.Join(lines[:n], "")
	return head + newStr + "\n" + content[len(head):], true
}

// modelReplace replaces the single occurrence of old, retrying with both
// strings trimmed when old does not occur verbatim.
func modelReplace(content, old, repl string) (string, bool) {
	if old == repl {
		return "", false
	}
	n := strings.Count(content, old)
	if n == 0 {
		old, repl = strings.Trim(old, " \t\n"), strings.Trim(repl, " \t\n")
		n = strings.Count(content, old)
	}
	if n != 1 {
		return "", false
	}
	i := strings.Index(content, old)
	return content[:i] + repl + content[i+len(old):], true
}

// modelViewRange reports whether view accepts [start, end] on a file of
// numLines lines.
func modelViewRange(numLines int, r []int) bool {
	start, end := r[0], r[1]
	if start < 1 || start > numLines {
		return false
	}
	if end == -1 || end > numLines {
		return true
	}
	return end >= start
}

// checkViewOutput checks that view's output shows the lines asked for,
// numbered like `cat -n`.
func checkViewOutput(t *testing.T, out, content string, r []int) {
	t.Helper()
	if len(content) > maxResponseChars/2 {
		return // truncated: the editor's unit tests cover that
	}
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	first, last := 1, len(lines)
	if len(r) == 2 {
		first = r[0]
		if r[1] != -1 {
			last = min(r[1], last)
		}
	}
	if !strings.Contains(out, "Here's the result of running `cat -n` on ") {
		t.Fatalf("view output has no header: %q", out)
	}
	for n := first; n <= last; n++ {
		if line := fmt.Sprintf("%6d\t%s\n", n, lines[n-1]); !strings.Contains(out, line) {
			t.Fatalf("view %v of %q: output %q lacks line %q", r, content, out, line)
		}
	}
}
