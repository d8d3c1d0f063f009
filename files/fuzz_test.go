package files

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
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
		_ = ExtractZip(context.Background(), zipPath, dest, KeepOwner)
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
