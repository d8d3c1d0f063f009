package files

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actionserver/actionserver/internal/chown"
)

// FuzzTree_RelativePathsStayInTheWorkspace writes, creates, moves and
// removes through arbitrary relative paths in a workspace full of links
// that point out of it, and fails if anything outside changed.
func FuzzTree_RelativePathsStayInTheWorkspace(f *testing.F) {
	for _, seed := range []string{"a", "../x", "out/x", "up/x", "abs/x", "loop/x", "a/../../x", "./out/../../x", "in/../up/x", "dot/x", "a\x00b"} {
		f.Add(seed, "b")
	}
	f.Fuzz(func(t *testing.T, p, q string) {
		root := t.TempDir()
		ws := filepath.Join(root, "ws")
		outside := filepath.Join(root, "outside")
		for _, d := range []string{ws, outside, filepath.Join(ws, "in")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		links := map[string]string{"out": outside, "up": "..", "abs": "/", "loop": "loop", "dot": ".", "in/back": "../.."}
		for name, target := range links {
			if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
				t.Fatal(err)
			}
		}
		tree := &Tree{Workspace: ws, Owner: chown.Keep}
		if filepath.IsAbs(p) || filepath.IsAbs(q) {
			return // absolute paths are not confined
		}
		_, _ = tree.Write(context.Background(), p, strings.NewReader("x"), WriteOptions{Parents: true, Size: -1})
		_ = tree.Mkdir(p, 0, true)
		_ = tree.Chmod(p, 0o777)
		_ = tree.Move(p, q, true)
		_ = tree.Remove(q, true)
		_, _ = tree.ListDir(p)
		entries, err := os.ReadDir(outside)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 0 {
			t.Fatalf("%q, %q: something was made outside the workspace: %v", p, q, entries[0].Name())
		}
		fi, err := os.Stat(outside)
		if err != nil || fi.Mode().Perm() != 0o755 {
			t.Fatalf("%q: the outside directory changed: %v %v", p, fi.Mode(), err)
		}
		if _, err := os.Lstat(filepath.Join(root, "x")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%q: a file appeared beside the workspace", p)
		}
	})
}
