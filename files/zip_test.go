package files

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/chown"
)

type zipEntry struct {
	name, body string
	mode       fs.FileMode
}

func makeZip(t testing.TB, entries ...zipEntry) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "up.zip")
	f, err := os.Create(p)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		require.NoError(t, err)
		_, err = io.WriteString(w, e.body)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	return p
}

func TestExtractZip_WritesTreeWithOwner(t *testing.T) {
	dest := t.TempDir()
	owner := chown.To(os.Getuid(), os.Getgid())
	if os.Geteuid() == 0 {
		owner = chown.To(1234, 2345)
	}
	zp := makeZip(t,
		zipEntry{name: "test_dir/"},
		zipEntry{name: "test_dir/file1.txt", body: "one"},
		zipEntry{name: "test_dir/sub/run.sh", body: "#!/bin/sh", mode: 0o755},
		zipEntry{name: "test_dir/link", body: "file1.txt", mode: fs.ModeSymlink | 0o777},
		zipEntry{name: "test_dir/sub/up", body: "../file1.txt", mode: fs.ModeSymlink | 0o777},
	)
	require.NoError(t, ExtractZip(context.Background(), zp, dest, owner))
	assert.Equal(t, "one", readFile(t, dest+"/test_dir/file1.txt"))
	assert.Equal(t, "one", readFile(t, dest+"/test_dir/link"), "inside symlink kept")
	assert.Equal(t, "one", readFile(t, dest+"/test_dir/sub/up"), "a link climbing but staying inside is kept")
	fi, err := os.Stat(dest + "/test_dir/sub/run.sh")
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o755), fi.Mode().Perm(), "executable bit kept")
	for _, p := range []string{"test_dir", "test_dir/sub", "test_dir/file1.txt", "test_dir/sub/run.sh", "test_dir/link"} {
		fi, err := os.Lstat(filepath.Join(dest, p))
		require.NoError(t, err)
		st := fi.Sys().(*syscall.Stat_t)
		assert.Equal(t, owner.UID(), int(st.Uid), p)
		assert.Equal(t, owner.GID(), int(st.Gid), p)
	}
}

func TestExtractZip_RefusesEscapes(t *testing.T) {
	tests := []struct {
		name    string
		entries []zipEntry
	}{
		{"parent directory", []zipEntry{{name: "ok.txt", body: "x"}, {name: "../escaped.txt", body: "x"}}},
		{"nested parent directory", []zipEntry{{name: "a/../../escaped.txt", body: "x"}}},
		{"absolute name", []zipEntry{{name: "ok.txt", body: "x"}, {name: "/tmp/escaped.txt", body: "x"}}},
		{"symlink to an absolute path", []zipEntry{{name: "ok.txt", body: "x"}, {name: "l", body: "/etc", mode: fs.ModeSymlink | 0o777}}},
		{"symlink climbing out", []zipEntry{{name: "a/l", body: "../../x", mode: fs.ModeSymlink | 0o777}}},
		// Each link alone stays inside; through the first, the second's
		// "../.." starts one level higher than its name says.
		{"chained symlinks", []zipEntry{{name: "s", body: ".", mode: fs.ModeSymlink | 0o777}, {name: "s/t/l", body: "../..", mode: fs.ModeSymlink | 0o777}}},
		{"symlink climbing through a symlink", []zipEntry{{name: "s", body: ".", mode: fs.ModeSymlink | 0o777}, {name: "l", body: "s/..", mode: fs.ModeSymlink | 0o777}}},
		{"file through an archive symlink", []zipEntry{{name: "d/"}, {name: "s", body: "d", mode: fs.ModeSymlink | 0o777}, {name: "s/f.txt", body: "x"}}},
		{"symlink listed after an entry under it", []zipEntry{{name: "s/f.txt", body: "x"}, {name: "s", body: ".", mode: fs.ModeSymlink | 0o777}}},
		{"directory that is also a symlink", []zipEntry{{name: "s", body: ".", mode: fs.ModeSymlink | 0o777}, {name: "s/"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			dest := filepath.Join(base, "dest")
			require.NoError(t, os.Mkdir(dest, 0o755))
			err := ExtractZip(context.Background(), makeZip(t, tt.entries...), dest, chown.Keep)
			assert.ErrorIs(t, err, ErrUnsafeZipEntry)
			entries, _ := os.ReadDir(dest)
			assert.Empty(t, entries, "nothing written, not even the safe entries")
			outside, _ := os.ReadDir(base)
			assert.Len(t, outside, 1, "nothing written beside dest")
			assert.Empty(t, linksLeaving(t, dest))
		})
	}
}

func TestExtractZip_ExistingSymlinkCannotRedirectWrites(t *testing.T) {
	link := fs.ModeSymlink | 0o777
	tests := []struct {
		name    string
		links   map[string]string // already in dest: name -> target ("OUT" is the outside directory)
		entries []zipEntry
	}{
		{"directory link out", map[string]string{"evil": "OUT"}, []zipEntry{{name: "evil/pwned.txt", body: "x"}}},
		{"file link out", map[string]string{"evilfile": "OUT/f"}, []zipEntry{{name: "evilfile", body: "x"}}},
		{"directory entry over a link out", map[string]string{"evil": "OUT"}, []zipEntry{{name: "evil/"}}},
		// The link stays inside, but through it the archive's "../.."
		// starts from dest itself.
		{"link to dest then a climbing link", map[string]string{"self": "."}, []zipEntry{{name: "self/t/l", body: "../..", mode: link}}},
		{"directory link inside", map[string]string{"inner": "sub"}, []zipEntry{{name: "inner/f.txt", body: "x"}}},
		{"file link inside", map[string]string{"lf": "sub/real.txt"}, []zipEntry{{name: "lf", body: "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			dest, outside := filepath.Join(base, "dest"), filepath.Join(base, "outside")
			require.NoError(t, os.MkdirAll(filepath.Join(dest, "sub"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dest, "sub", "real.txt"), []byte("keep"), 0o644))
			require.NoError(t, os.Mkdir(outside, 0o755))
			for name, target := range tt.links {
				require.NoError(t, os.Symlink(strings.Replace(target, "OUT", outside, 1), filepath.Join(dest, name)))
			}
			before := treeOf(t, base)

			err := ExtractZip(context.Background(), makeZip(t, tt.entries...), dest, chown.Keep)
			assert.ErrorIs(t, err, ErrUnsafeZipEntry)
			assert.Equal(t, before, treeOf(t, base), "nothing written anywhere")
			assert.Equal(t, "keep", readFile(t, filepath.Join(dest, "sub", "real.txt")))
		})
	}
}

func TestExtractZip_FIFOInTheWayFailsInsteadOfBlocking(t *testing.T) {
	dest := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dest, "pipe"), 0o644))
	err := ExtractZip(context.Background(), makeZip(t, zipEntry{name: "pipe", body: "x"}), dest, chown.Keep)
	assert.Error(t, err)
}

// treeOf lists every path under dir (without following symlinks) with its
// type, to compare a tree before and after.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, err := filepath.Rel(dir, p)
		require.NoError(t, err)
		out = append(out, rel+" "+d.Type().String())
		return nil
	}))
	return out
}

// linksLeaving returns the symlinks under dest through which a write would
// land outside dest, dangling ones included.
func linksLeaving(t testing.TB, dest string) []string {
	t.Helper()
	realDest, err := filepath.EvalSymlinks(dest)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = filepath.WalkDir(realDest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		land, ok := resolveForWrite(p, 0)
		if ok && land != realDest && !strings.HasPrefix(land, realDest+"/") {
			out = append(out, p+" -> "+land)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// resolveForWrite resolves the absolute path p as open(O_CREAT) would:
// symlinks are followed, dangling ones too, and ".." climbs from where the
// path really is, which filepath.Clean would get wrong after a symlink. ok
// is false for a loop.
func resolveForWrite(p string, hops int) (string, bool) {
	if hops > 40 {
		return "", false
	}
	parts := strings.Split(p, "/")
	cur := "/"
	for i, c := range parts {
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		target, err := os.Readlink(next)
		if err != nil {
			cur = next // not a link, or missing: the rest is created as named
			continue
		}
		if !filepath.IsAbs(target) {
			target = cur + "/" + target
		}
		return resolveForWrite(target+"/"+strings.Join(parts[i+1:], "/"), hops+1)
	}
	return cur, true
}

func TestExtractZip_LargeEntryStreams(t *testing.T) {
	// 64 MiB of zeros compresses to little; extraction must not hold it.
	p := filepath.Join(t.TempDir(), "big.zip")
	f, err := os.Create(p)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	w, err := zw.Create("big.bin")
	require.NoError(t, err)
	chunk := make([]byte, 1<<20)
	for range 64 {
		_, err = w.Write(chunk)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	dest := t.TempDir()
	require.NoError(t, ExtractZip(context.Background(), p, dest, chown.Keep))
	runtime.ReadMemStats(&after)
	fi, err := os.Stat(dest + "/big.bin")
	require.NoError(t, err)
	assert.Equal(t, int64(64<<20), fi.Size())
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "allocated while extracting")
}

func zipNames(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		body, err := io.ReadAll(rc)
		require.NoError(t, err)
		rc.Close()
		out[f.Name] = string(body)
	}
	return out
}

func TestWriteZip_Layout(t *testing.T) {
	dir := t.TempDir()
	root := dir + "/knowledge"
	writeFiles(t, dir, map[string]string{"knowledge/knowledge.md": "k", "knowledge/sub/deep.txt": "d", "knowledge/.hidden": "h", "other.txt": "o"})
	require.NoError(t, os.MkdirAll(root+"/empty", 0o755))
	require.NoError(t, os.Symlink("knowledge.md", root+"/link.md"))
	require.NoError(t, os.Symlink("nowhere", root+"/broken"))
	require.NoError(t, os.Symlink(dir, root+"/loop"))

	var buf bytes.Buffer
	require.NoError(t, WriteZip(context.Background(), &buf, root))
	got := zipNames(t, buf.Bytes())
	assert.Equal(t, map[string]string{"knowledge.md": "k", "sub/deep.txt": "d", ".hidden": "h", "link.md": "k"}, got)
}

func TestWriteZip_RegularFileGivesEmptyZip(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "x"})
	var buf bytes.Buffer
	require.NoError(t, WriteZip(context.Background(), &buf, dir+"/f.txt"))
	assert.Empty(t, zipNames(t, buf.Bytes()))
}

func TestWriteZip_MissingRoot(t *testing.T) {
	err := WriteZip(context.Background(), io.Discard, t.TempDir()+"/nope")
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestWriteZip_StopsWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a": "x", "b": "y"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, WriteZip(ctx, io.Discard, dir), context.Canceled)
}

func TestZip_RoundTrip(t *testing.T) {
	src := t.TempDir()
	writeFiles(t, src, map[string]string{"a.txt": "A", "d/b.txt": "B", "d/e/c.txt": "C"})
	zp := filepath.Join(t.TempDir(), "x.zip")
	f, err := os.Create(zp)
	require.NoError(t, err)
	require.NoError(t, WriteZip(context.Background(), f, src))
	require.NoError(t, f.Close())
	dest := t.TempDir()
	require.NoError(t, ExtractZip(context.Background(), zp, dest, chown.Keep))
	var names []string
	filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if !d.IsDir() {
			rel, _ := filepath.Rel(dest, p)
			names = append(names, rel+"="+readFile(t, p))
		}
		return nil
	})
	sort.Strings(names)
	assert.Equal(t, []string{"a.txt=A", "d/b.txt=B", "d/e/c.txt=C"}, names)
}

func TestWriteZip_FollowsARootThatLinksToADirectory(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"real/a.txt": "a", "real/sub/b.txt": "b"})
	require.NoError(t, os.Symlink("real", dir+"/link"))
	var buf bytes.Buffer
	require.NoError(t, WriteZip(context.Background(), &buf, dir+"/link"))
	assert.Equal(t, map[string]string{"a.txt": "a", "sub/b.txt": "b"}, zipNames(t, buf.Bytes()))
}

// bombZip writes an archive of one entry of size bytes of zeros (a
// multiple of 1 MiB), deflated, without compressing them all: the deflate
// stream of a MiB of zeros that follows zeros is repeated.
func bombZip(t *testing.T, size int64) string {
	t.Helper()
	var first, again, end bytes.Buffer
	fw, err := flate.NewWriter(&first, flate.BestCompression)
	require.NoError(t, err)
	mib := make([]byte, 1<<20)
	_, err = fw.Write(mib)
	require.NoError(t, err)
	require.NoError(t, fw.Flush())
	fw.Reset(&again) // a fresh stream: its later blocks only refer back to zeros
	_, err = fw.Write(mib)
	require.NoError(t, err)
	require.NoError(t, fw.Flush())
	again.Reset()
	_, err = fw.Write(mib)
	require.NoError(t, err)
	require.NoError(t, fw.Flush())
	block := bytes.Clone(again.Bytes())
	again.Reset()
	fw.Reset(&end)
	require.NoError(t, fw.Close())

	var data bytes.Buffer
	data.Write(first.Bytes())
	for range size>>20 - 1 {
		data.Write(block)
	}
	data.Write(end.Bytes()) // an empty final block
	crc := crc32.NewIEEE()
	for range size >> 20 {
		crc.Write(mib)
	}
	p := filepath.Join(t.TempDir(), "bomb.zip")
	f, err := os.Create(p)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "zeros.bin", Method: zip.Deflate,
		CompressedSize64: uint64(data.Len()), UncompressedSize64: uint64(size), CRC32: crc.Sum32()})
	require.NoError(t, err)
	_, err = w.Write(data.Bytes())
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	return p
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestBombZip_IsAValidArchive(t *testing.T) {
	p := bombZip(t, 8<<20)
	dest := t.TempDir()
	require.NoError(t, ExtractZip(context.Background(), p, dest, chown.Keep))
	data, err := os.ReadFile(dest + "/zeros.bin")
	require.NoError(t, err)
	assert.Equal(t, make([]byte, 8<<20), data)
}

func TestExtractZip_BombIsRefusedBeforeWriting(t *testing.T) {
	p := bombZip(t, zipRatioFloor+1<<20)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Less(t, fi.Size()*MaxZipRatio, int64(zipRatioFloor), "the test archive is a bomb by ratio")
	dest := t.TempDir()
	err = ExtractZip(context.Background(), p, dest, chown.Keep)
	assert.ErrorIs(t, err, ErrZipTooLarge)
	assert.Equal(t, []string{". d---------"}, treeOf(t, dest), "nothing written")
}

func TestExtractZip_LyingSizesFailTheEntry(t *testing.T) {
	// An entry whose header claims 10 bytes but holds 1 MiB.
	var data bytes.Buffer
	fw, err := flate.NewWriter(&data, flate.BestSpeed)
	require.NoError(t, err)
	_, err = io.CopyN(fw, zeroReader{}, 1<<20)
	require.NoError(t, err)
	require.NoError(t, fw.Close())
	p := filepath.Join(t.TempDir(), "liar.zip")
	f, err := os.Create(p)
	require.NoError(t, err)
	zw := zip.NewWriter(f)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "liar.bin", Method: zip.Deflate,
		CompressedSize64: uint64(data.Len()), UncompressedSize64: 10, CRC32: 0})
	require.NoError(t, err)
	_, err = w.Write(data.Bytes())
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())

	dest := t.TempDir()
	assert.Error(t, ExtractZip(context.Background(), p, dest, chown.Keep))
	fi, err := os.Stat(dest + "/liar.bin")
	if err == nil {
		assert.LessOrEqual(t, fi.Size(), int64(64<<10), "no more than a buffer past the declared size")
	}
}

func TestZipAllowance(t *testing.T) {
	assert.Equal(t, uint64(zipRatioFloor), zipAllowance(1))
	assert.Equal(t, uint64(16<<20)*MaxZipRatio, zipAllowance(16<<20), "by ratio")
	assert.Equal(t, uint64(MaxZipTotal), zipAllowance(1<<40))
}
