package files

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actionserver/actionserver/internal/asuser"
	"github.com/actionserver/actionserver/internal/chown"
)

// rightsMarker is the content of the files no operation may reveal.
const rightsMarker = "FORBIDDEN-CONTENT"

// rightsTree is a workspace with links an agent planted towards a file and
// a directory its user may not read, with the rights the calls take.
type rightsTree struct {
	ws, secret, private, privateFile string
	as                               *asuser.User
	owner                            chown.Owner
}

// newRightsTree builds the tree. As root the calls take an unprivileged
// user's rights (the server root, the shells a sandbox user); otherwise
// the test's own, and the forbidden files are made unreadable to it.
func newRightsTree(t *testing.T) rightsTree {
	t.Helper()
	top := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(filepath.Dir(top), 0o755))
	must(os.Chmod(top, 0o755))
	r := rightsTree{ws: filepath.Join(top, "ws"), secret: filepath.Join(top, "secret.png"),
		private: filepath.Join(top, "private"), owner: chown.Keep}
	r.privateFile = filepath.Join(r.private, "inside.txt")
	must(os.Mkdir(r.ws, 0o777))
	must(os.Chmod(r.ws, 0o777))
	must(os.Mkdir(r.private, 0o700))
	must(os.WriteFile(r.privateFile, []byte(rightsMarker), 0o600))
	must(os.WriteFile(r.secret, []byte(rightsMarker), 0o600))
	if os.Geteuid() == 0 {
		r.as = &asuser.User{UID: 65534, GID: 65534}
		r.owner = chown.To(65534, 65534)
	} else {
		must(os.Chmod(r.secret, 0))
		must(os.Chmod(r.private, 0))
		t.Cleanup(func() { os.Chmod(r.private, 0o700) })
	}
	defer func() {
		if os.Geteuid() != 0 {
			// The test's own directory: closed to it, as root's is to
			// the sandbox user.
			must(os.Chmod(top, 0o555))
			t.Cleanup(func() { os.Chmod(top, 0o755) })
		}
	}()
	for name, target := range map[string]string{"a.png": r.secret, "private": r.private, "inside.txt": r.privateFile, "up": top} {
		must(os.Symlink(target, filepath.Join(r.ws, name)))
	}
	return r
}

// intact fails the test if a forbidden file changed or something was made
// beside them.
func (r rightsTree) intact(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		os.Chmod(r.private, 0o700)
		os.Chmod(r.secret, 0o600)
		defer os.Chmod(r.private, 0)
		defer os.Chmod(r.secret, 0)
	}
	for _, p := range []string{r.secret, r.privateFile} {
		data, err := os.ReadFile(p)
		if err != nil || string(data) != rightsMarker {
			t.Fatalf("%s changed: %q, %v", p, data, err)
		}
	}
	for dir, n := range map[string]int{filepath.Dir(r.secret): 3, r.private: 1} {
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) != n {
			t.Fatalf("%s has %d entries, want %d (%v)", dir, len(entries), n, err)
		}
	}
}

// FuzzPathsStayWithinUserRights sends fuzzed paths, joined onto the
// workspace, to every operation a file route runs:
// Read, Write, the editor's commands, List, WriteZip, ReceiveFile and
// MkdirAll. Whatever the path (".." climbs, NUL bytes, long names, the
// planted links), no result may carry the forbidden content and the
// forbidden files and directories must stay as they were.
func FuzzPathsStayWithinUserRights(f *testing.F) {
	for _, seed := range []struct {
		op   uint8
		path string
	}{
		{0, "a.png"}, {1, "a.png"}, {2, "inside.txt"}, {3, "private/inside.txt"},
		{4, "private"}, {5, "up/private"}, {6, "private/new.txt"}, {7, "up/secret.png"},
		{8, "../secret.png"}, {1, "../private/inside.txt"}, {2, "x\x00y"},
		{3, strings.Repeat("n", 300)}, {9, "up"}, {10, "private/made"}, {0, "up/./private/../secret.png"},
	} {
		f.Add(seed.op, seed.path)
	}
	f.Fuzz(func(t *testing.T, op uint8, path string) {
		// Under the workspace, climbing one level at most: the tree's
		// directories are the test's, and a path that climbed further
		// would let the (legitimate) writes land in the machine's /tmp.
		climbs := 0
		for _, c := range strings.Split(path, "/") {
			if c == ".." {
				climbs++
			}
		}
		if climbs > 1 {
			return
		}
		r := newRightsTree(t)
		path = r.ws + "/" + path
		ctx := context.Background()
		ed := &Editor{Owner: r.owner, HistoryDir: t.TempDir()}
		if r.as != nil {
			if err := os.Chmod(ed.HistoryDir, 0o777); err != nil {
				t.Fatal(err)
			}
		}
		defer ed.Close()
		var out bytes.Buffer
		_ = r.as.Do(func() error {
			var s string
			var err error
			switch op % 11 {
			case 0:
				s, err = Read(ctx, r.ws, path, 0, -1)
			case 1:
				err = Write(ctx, r.ws, path, "overwritten", 0, -1, r.owner)
			case 2, 3:
				cmds := []string{CmdView, CmdCreate, CmdStrReplace, CmdInsert, CmdUndoEdit}
				text, old := "created", "FORBIDDEN"
				var res EditResult
				res, err = ed.Do(ctx, EditRequest{Command: cmds[int(op)%len(cmds)], Path: path, FileText: &text,
					OldStr: &old, NewStr: &text, InsertLine: Line(0)})
				s = res.Output + res.OldContent + res.NewContent
			case 4:
				s = strings.Join(List(path), "\n")
			case 5, 9:
				err = WriteZip(ctx, &out, path)
			case 6, 7:
				_, err = ReceiveFile(ctx, filepath.Dir(path), filepath.Base(path), strings.NewReader("received"), r.owner)
			case 8:
				s, err = Read(ctx, r.ws, path, 0, 1)
			case 10:
				err = MkdirAll(path, r.owner)
			}
			if err != nil {
				s += err.Error()
			}
			out.WriteString(s)
			return nil
		})
		if bytes.Contains(out.Bytes(), []byte(rightsMarker)) {
			t.Fatalf("op %d on %q revealed the forbidden content", op%11, path)
		}
		r.intact(t)
	})
}
