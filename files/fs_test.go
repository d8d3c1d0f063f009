package files

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/chown"
)

// newTree returns a tree over a fresh workspace, with a directory outside
// it that holds a secret, and a symlink inside that points there.
func newTree(t *testing.T) (*Tree, string, string) {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	outside := filepath.Join(root, "outside")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "out")))
	require.NoError(t, os.Symlink("../outside/secret", filepath.Join(ws, "secret-link")))
	return &Tree{Workspace: ws, Owner: chown.Keep}, ws, outside
}

func TestTree_RelativePathsCannotLeaveTheWorkspace(t *testing.T) {
	tree, _, outside := newTree(t)
	for _, p := range []string{"../outside/secret", "out/secret", "secret-link", "a/../../outside/secret"} {
		t.Run(p, func(t *testing.T) {
			_, _, err := tree.OpenRead(p)
			assert.ErrorIs(t, err, ErrEscapes, "read")
			_, err = tree.Write(context.Background(), p, strings.NewReader("x"), WriteOptions{Size: -1})
			assert.Error(t, err, "write")
			assert.Error(t, tree.Chmod(p, 0o777), "chmod")
		})
	}
	_, err := tree.ListDir("out")
	assert.ErrorIs(t, err, ErrEscapes)
	assert.ErrorIs(t, tree.Mkdir("out/new", 0, true), ErrEscapes)
	assert.Error(t, tree.Move("out/secret", "stolen", false))
	assert.Error(t, tree.Remove("out/secret", false))
	b, err := os.ReadFile(filepath.Join(outside, "secret"))
	require.NoError(t, err)
	assert.Equal(t, "s3cret", string(b), "nothing outside changed")
	fi, err := os.Stat(filepath.Join(outside, "secret"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o600), fi.Mode().Perm())
	_, err = os.Stat(filepath.Join(outside, "new"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestTree_AbsolutePathsFollowLinksAnywhere(t *testing.T) {
	tree, ws, _ := newTree(t)
	f, e, err := tree.OpenRead(filepath.Join(ws, "secret-link"))
	require.NoError(t, err)
	defer f.Close()
	b, _ := io.ReadAll(f)
	assert.Equal(t, "s3cret", string(b))
	assert.Equal(t, int64(6), e.Size)
}

func TestTree_BadPathsAreRefused(t *testing.T) {
	tree, _, _ := newTree(t)
	for _, p := range []string{"", "a\x00b", strings.Repeat("a", 5000)} {
		_, err := tree.Stat(p)
		assert.ErrorIs(t, err, ErrBadPath, "%q", p)
	}
	assert.ErrorIs(t, tree.Remove(".", true), ErrIsRoot)
	assert.ErrorIs(t, tree.Remove("/", true), ErrIsRoot)
}

func TestTree_WriteThenReadAndStat(t *testing.T) {
	tree, ws, _ := newTree(t)
	tree.Owner = chown.To(4321, 4322)
	if os.Getuid() != 0 {
		tree.Owner = chown.Keep
	}
	data := bytes.Repeat([]byte("0123456789"), 300_000)
	n, err := tree.Write(context.Background(), "a/b/c.bin", bytes.NewReader(data), WriteOptions{Parents: true, Mode: 0o640, Size: int64(len(data))})
	require.NoError(t, err)
	assert.Equal(t, int64(len(data)), n)
	got, err := os.ReadFile(filepath.Join(ws, "a/b/c.bin"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got))

	e, err := tree.Stat("a/b/c.bin")
	require.NoError(t, err)
	assert.Equal(t, TypeFile, e.Type)
	assert.Equal(t, fs.FileMode(0o640), e.Mode)
	assert.Equal(t, int64(len(data)), e.Size)
	if os.Getuid() == 0 {
		for _, p := range []string{"a", "a/b", "a/b/c.bin"} {
			e, err := tree.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, [2]int{4321, 4322}, [2]int{e.UID, e.GID}, "%s belongs to the sandbox user", p)
		}
	}
	// A rewrite keeps mode and owner, and leaves no temporary file.
	_, err = tree.Write(context.Background(), "a/b/c.bin", strings.NewReader("new"), WriteOptions{Mode: 0o600, Size: -1})
	require.NoError(t, err)
	e, err = tree.Stat("a/b/c.bin")
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o640), e.Mode)
	assert.Equal(t, int64(3), e.Size)
	list, err := tree.ListDir("a/b")
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "c.bin", list[0].Name)
}

func TestTree_WriteThroughALinkWritesItsTarget(t *testing.T) {
	tree, ws, _ := newTree(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "real"), []byte("old"), 0o644))
	require.NoError(t, os.Symlink("real", filepath.Join(ws, "link")))
	_, err := tree.Write(context.Background(), "link", strings.NewReader("new"), WriteOptions{Size: -1})
	require.NoError(t, err)
	b, _ := os.ReadFile(filepath.Join(ws, "real"))
	assert.Equal(t, "new", string(b))
	e, err := tree.Stat("link")
	require.NoError(t, err)
	assert.Equal(t, TypeSymlink, e.Type, "the link is still a link")
	assert.Equal(t, "real", e.Target)
}

// failAfter fails every write once n bytes went through, as a full disk.
type failAfter struct {
	w   io.Writer
	n   int
	err error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	if len(p) > f.n {
		p = p[:f.n]
	}
	n, err := f.w.Write(p)
	f.n -= n
	return n, err
}

func TestTree_FailedWriteLeavesTheOldFileAndNoTemporary(t *testing.T) {
	tests := []struct {
		name string
		old  bool
		err  error
		body io.Reader
		size int64
	}{
		{"disk full on a new file", false, syscall.ENOSPC, bytes.NewReader(make([]byte, 3<<20)), -1},
		{"disk full over an old file", true, syscall.ENOSPC, bytes.NewReader(make([]byte, 3<<20)), -1},
		{"body shorter than announced", true, ErrSizeMismatch, strings.NewReader("short"), 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree, ws, _ := newTree(t)
			tree.writeHook = func(w io.Writer) io.Writer { return &failAfter{w: w, n: 1 << 20, err: syscall.ENOSPC} }
			target := filepath.Join(ws, "f")
			if tt.old {
				require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
			}
			_, err := tree.Write(context.Background(), "f", tt.body, WriteOptions{Size: tt.size})
			assert.ErrorIs(t, err, tt.err)
			entries, err := os.ReadDir(ws)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if tt.old {
				b, _ := os.ReadFile(target)
				assert.Equal(t, "old", string(b))
				assert.ElementsMatch(t, []string{"f", "out", "secret-link"}, names)
			} else {
				assert.ElementsMatch(t, []string{"out", "secret-link"}, names)
			}
		})
	}
}

// TestTree_FullDiskOnARealFileSystem fills a 1 MB tmpfs; it needs root to
// mount one and unmounts it when done.
func TestTree_FullDiskOnARealFileSystem(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	tree := &Tree{Workspace: dir, Owner: chown.Keep}
	_, err := tree.Write(context.Background(), "big", bytes.NewReader(make([]byte, 4<<20)), WriteOptions{Size: -1})
	assert.ErrorIs(t, err, syscall.ENOSPC)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no file and no temporary is left")
}

func TestTree_WriteAtOffsetResumes(t *testing.T) {
	tree, ws, _ := newTree(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "part"), []byte("hello, garbage"), 0o644))
	off := int64(7)
	_, err := tree.Write(context.Background(), "part", strings.NewReader("world"), WriteOptions{Offset: &off, Size: -1})
	require.NoError(t, err)
	b, _ := os.ReadFile(filepath.Join(ws, "part"))
	assert.Equal(t, "hello, world", string(b))
	off = 100
	_, err = tree.Write(context.Background(), "part", strings.NewReader("x"), WriteOptions{Offset: &off, Size: -1})
	assert.ErrorIs(t, err, ErrOffsetBeyondEnd)
}

func TestTree_MkdirMoveRemoveChmod(t *testing.T) {
	tree, ws, outside := newTree(t)
	require.NoError(t, tree.Mkdir("d/e/f", 0o750, true))
	require.NoError(t, tree.Mkdir("d/e/f", 0, true), "mkdir -p accepts an existing directory")
	assert.ErrorIs(t, tree.Mkdir("d/e/f", 0, false), fs.ErrExist)
	assert.ErrorIs(t, tree.Mkdir("x/y", 0, false), fs.ErrNotExist)
	fi, err := os.Stat(filepath.Join(ws, "d/e/f"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o750), fi.Mode().Perm())

	require.NoError(t, os.WriteFile(filepath.Join(ws, "d/a"), []byte("a"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "d/b"), []byte("b"), 0o644))
	assert.ErrorIs(t, tree.Move("d/a", "d/b", false), fs.ErrExist)
	require.NoError(t, tree.Move("d/a", "d/b", true))
	b, _ := os.ReadFile(filepath.Join(ws, "d/b"))
	assert.Equal(t, "a", string(b))
	assert.ErrorIs(t, tree.Move("d/nothing", "d/c", false), fs.ErrNotExist)

	require.NoError(t, tree.Chmod("d/b", fs.ModeSetuid|0o711))
	e, err := tree.Stat("d/b")
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o711)|fs.ModeSetuid, e.Mode)

	// A recursive remove takes the links inside, never what they point to.
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "d/e/link")))
	assert.ErrorIs(t, tree.Remove("d", false), syscall.ENOTEMPTY)
	require.NoError(t, tree.Remove("d", true))
	_, err = os.Stat(filepath.Join(ws, "d"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = os.Stat(filepath.Join(outside, "secret"))
	assert.NoError(t, err, "the link's target survives")
	assert.ErrorIs(t, tree.Remove("d", true), fs.ErrNotExist)

	// A link is removed itself.
	require.NoError(t, tree.Remove("out", false))
	_, err = os.Stat(outside)
	assert.NoError(t, err)
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]fs.FileMode{"755": 0o755, "0644": 0o644, "1777": 0o777 | fs.ModeSticky} {
		m, err := ParseMode(in)
		require.NoError(t, err)
		assert.Equal(t, want, m)
	}
	for _, bad := range []string{"", "9", "17777", "rwx", "-1"} {
		_, err := ParseMode(bad)
		assert.Error(t, err, bad)
	}
}

func TestTree_EveryOperationRunsThroughDo(t *testing.T) {
	tree, ws, _ := newTree(t)
	refused := errors.New("refused")
	ran := 0
	tree.Do = func(op func() error) error { ran++; return refused }
	ops := map[string]func() error{
		"stat": func() error { _, err := tree.Stat("x"); return err },
		"list": func() error { _, err := tree.ListDir("."); return err },
		"read": func() error { _, _, err := tree.OpenRead("x"); return err },
		"write": func() error {
			_, err := tree.Write(context.Background(), "new", strings.NewReader("x"), WriteOptions{Size: -1})
			return err
		},
		"mkdir": func() error { return tree.Mkdir("d", 0, true) },
		"move":  func() error { return tree.Move("x", "y", false) },
		"rm":    func() error { return tree.Remove("x", false) },
		"chmod": func() error { return tree.Chmod("x", 0o600) },
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, "x"), []byte("x"), 0o644))
	for name, op := range ops {
		assert.ErrorIs(t, op(), refused, name)
	}
	assert.Equal(t, len(ops), ran, "each operation asked Do once")
	entries, err := os.ReadDir(ws)
	require.NoError(t, err)
	assert.Len(t, entries, 3, "nothing ran without Do: only x and the two links")
	fi, err := os.Stat(filepath.Join(ws, "x"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o644), fi.Mode().Perm())

	// A Do that runs the operation gives its result.
	tree.Do = func(op func() error) error { return op() }
	e, err := tree.Stat("x")
	require.NoError(t, err)
	assert.Equal(t, int64(1), e.Size)
}
