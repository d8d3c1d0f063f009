package files

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/asuser"
	"github.com/actionserver/actionserver/internal/chown"
)

func TestResolve(t *testing.T) {
	tests := []struct{ cwd, path, want string }{
		{"/workspace", "hello.sh", "/workspace/hello.sh"},
		{"/workspace", "/etc/hosts", "/etc/hosts"},
		{"/workspace/", "./a//b/", "/workspace/a/b"},
		{"/workspace", "../x", "/workspace/../x"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Resolve(tt.cwd, tt.path), "%s + %s", tt.cwd, tt.path)
	}
}

func TestRead_Ranges(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f": "l0\nl1\nl2\nl3\nl4\n", "nonl": "a\nb", "empty": "", "crlf": "a\r\nb\r\n"})
	tests := []struct {
		name       string
		file       string
		start, end int
		want       string
	}{
		{"whole", "f", 0, -1, "l0\nl1\nl2\nl3\nl4\n"},
		{"from start", "f", 2, -1, "l2\nl3\nl4\n"},
		{"range", "f", 1, 3, "l1\nl2\n"},
		{"empty range gives one line", "f", 2, 2, "l2\n"},
		{"start past the end is pulled back", "f", 9, 10, "l3\nl4\n"},
		{"end past the end", "f", 3, 99, "l3\nl4\n"},
		{"negative start", "f", -5, -1, "l0\nl1\nl2\nl3\nl4\n"},
		{"no trailing newline", "nonl", 0, -1, "a\nb"},
		{"empty file", "empty", 0, -1, ""},
		{"empty file with range", "empty", 0, 5, ""},
		{"CRLF read as LF", "crlf", 0, -1, "a\nb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(context.Background(), dir, tt.file, tt.start, tt.end)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRead_Errors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"latin": "caf\xe9\n", "bin": "\x00\x01\x02\x03binary\xff"})
	require.NoError(t, os.Mkdir(dir+"/d", 0o755))
	tests := []struct{ name, path, want string }{
		{"missing", "nope.txt", "File not found: " + dir + "/nope.txt. Your current working directory is " + dir + "."},
		{"directory", "d", "Path is a directory: " + dir + "/d. You can only read files"},
		{"not UTF-8", "latin", "File could not be decoded as utf-8: " + dir + "/latin."},
		{"binary", dir + "/bin", BinaryFileMessage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(context.Background(), dir, tt.path, 0, -1)
			fe, ok := IsError(err)
			require.True(t, ok, "agent-facing error, got %v", err)
			assert.Equal(t, tt.want, fe.Error())
		})
	}
}

func TestRead_MediaAsDataURL(t *testing.T) {
	dir := t.TempDir()
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	writeFiles(t, dir, map[string]string{"a.PNG": png, "b.jpg": "jpg", "c.pdf": "%PDF-1.4", "d.webm": "w", "e.ogg": "o"})
	tests := []struct{ file, want string }{
		{"a.PNG", "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte(png))},
		{"b.jpg", "data:image/jpeg;base64,anBn"},
		{"c.pdf", "data:application/pdf;base64,JVBERi0xLjQ="},
		{"d.webm", "data:video/webm;base64,dw=="},
		{"e.ogg", "data:audio/ogg;base64,bw=="},
	}
	for _, tt := range tests {
		got, err := Read(context.Background(), dir, tt.file, 0, -1)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got, tt.file)
	}
	_, err := Read(context.Background(), dir, "missing.png", 0, -1)
	fe, ok := IsError(err)
	require.True(t, ok)
	assert.Equal(t, "File not found: "+dir+"/missing.png. Your current working directory is "+dir+".", fe.Msg)
}

func TestRead_PermissionDeniedIsAServerFault(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f": "x"})
	require.NoError(t, os.Chmod(dir+"/f", 0))
	_, err := Read(context.Background(), dir, "f", 0, -1)
	_, ok := IsError(err)
	assert.False(t, ok)
	assert.ErrorIs(t, err, os.ErrPermission)
}

func TestWrite(t *testing.T) {
	tests := []struct {
		name       string
		existing   *string
		content    string
		start, end int
		want       string
	}{
		{"new file gets a trailing newline", nil, "Hello World", 0, -1, "Hello World\n"},
		{"content ending in newline gets an empty line", nil, "a\n", 0, -1, "a\n\n"},
		{"empty content", nil, "", 0, -1, "\n"},
		{"overwrite", sp("old\nfile\n"), "new", 0, -1, "new\n"},
		{"replace a middle range", sp("0\n1\n2\n3\n"), "X", 1, 3, "0\nX\n3\n"},
		{"insert keeping the tail", sp("0\n1\n"), "X", 0, 1, "X\n1\n"},
		{"negative start slices from the end", sp("0\n1\n2\n"), "X", -1, -1, "0\n1\nX\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.existing != nil {
				writeFiles(t, dir, map[string]string{"f": *tt.existing})
			}
			require.NoError(t, Write(context.Background(), dir, "f", tt.content, tt.start, tt.end, chown.Keep))
			assert.Equal(t, tt.want, readFile(t, dir+"/f"))
		})
	}
}

func TestWrite_CreatesParentsAndSetsModeAndOwner(t *testing.T) {
	dir := t.TempDir()
	owner := chown.To(os.Getuid(), os.Getgid())
	if os.Geteuid() == 0 {
		owner = chown.To(1234, 2345)
	}
	require.NoError(t, Write(context.Background(), dir, "a/b/new.txt", "x", 0, -1, owner))
	fi, err := os.Stat(dir + "/a/b/new.txt")
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o664), fi.Mode().Perm())
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, owner.UID(), int(st.Uid))
	assert.Equal(t, owner.GID(), int(st.Gid))
	di, err := os.Stat(dir + "/a")
	require.NoError(t, err)
	assert.Equal(t, owner.UID(), int(di.Sys().(*syscall.Stat_t).Uid), "created parents belong to the owner")
}

func TestWrite_KeepsModeAndOwnerOfExistingFile(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"s.sh": "old\n"})
	require.NoError(t, os.Chmod(dir+"/s.sh", 0o750))
	if os.Geteuid() == 0 {
		require.NoError(t, os.Chown(dir+"/s.sh", 4321, 5432))
	}
	before, err := os.Stat(dir + "/s.sh")
	require.NoError(t, err)
	require.NoError(t, Write(context.Background(), dir, "s.sh", "new", 0, -1, chown.To(0, 0)))
	after, err := os.Stat(dir + "/s.sh")
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o750), after.Mode().Perm())
	assert.Equal(t, before.Sys().(*syscall.Stat_t).Uid, after.Sys().(*syscall.Stat_t).Uid)
	assert.Equal(t, before.Sys().(*syscall.Stat_t).Gid, after.Sys().(*syscall.Stat_t).Gid)
	assert.Equal(t, "new\n", readFile(t, dir+"/s.sh"))
}

func TestWrite_ThroughSymlinkWritesTheTarget(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"real.txt": "old\n"})
	require.NoError(t, os.Symlink("real.txt", dir+"/link.txt"))
	require.NoError(t, Write(context.Background(), dir, "link.txt", "new", 0, -1, chown.Keep))
	assert.Equal(t, "new\n", readFile(t, dir+"/real.txt"))
	target, err := os.Readlink(dir + "/link.txt")
	require.NoError(t, err)
	assert.Equal(t, "real.txt", target, "the link stays a link")
}

func TestWrite_LeavesNoTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	for range 3 {
		require.NoError(t, Write(context.Background(), dir, "f", "x", 0, -1, chown.Keep))
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "f", entries[0].Name())
}

func TestWrite_Errors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"latin": "caf\xe9\n"})
	require.NoError(t, os.Mkdir(dir+"/d", 0o755))
	// A write follows the link to a file that cannot be made, as open(2)
	// would.
	require.NoError(t, os.Symlink("nodir/f", dir+"/dangling"))
	tests := []struct{ name, path, want string }{
		{"directory", "d", "Path is a directory: " + dir + "/d. You can only write to files"},
		{"not UTF-8", "latin", "File could not be decoded as utf-8: " + dir + "/latin"},
		{"link into a missing directory", "dangling", "File not found: " + dir + "/dangling"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Write(context.Background(), dir, tt.path, "x", 0, -1, chown.Keep)
			fe, ok := IsError(err)
			require.True(t, ok, "got %v", err)
			assert.Equal(t, tt.want, fe.Msg)
		})
	}
	assert.Equal(t, "caf\xe9\n", readFile(t, dir+"/latin"), "untouched")
}

func TestWrite_OwnershipFailureIsReportedAfterWriting(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may chown to anyone")
	}
	dir := t.TempDir()
	err := Write(context.Background(), dir, "f", "x", 0, -1, chown.To(0, 0))
	fe, ok := IsError(err)
	require.True(t, ok, "got %v", err)
	assert.Equal(t, "File "+dir+"/f written, but failed to change ownership and permissions: [Errno 1] Operation not permitted: '"+dir+"/f'", fe.Msg)
	assert.Equal(t, "x\n", readFile(t, dir+"/f"))
	assert.True(t, errors.Is(err, syscall.EPERM))
}

func TestIsBinary(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"text": "hello world\n", "utf8": "héllo wörld ñ çà\n", "latin": "caf\xe9 cr\xe8me\n",
		"nul": "abc\x00def", "ff": "abc\xffdef", "ctrl": "\x01\x02\x03\x04\x05\x06\x07\x0e\x0f\x10", "somectrl": "\x01\x02\x03\x04\x05\x06abc", "empty": "", "x.pyc": "text",
	})
	tests := []struct {
		file string
		want bool
	}{
		{"text", false}, {"utf8", false}, {"latin", false}, {"empty", false}, {"missing", false},
		{"nul", true}, {"ff", true}, {"ctrl", true}, {"x.pyc", true}, {"somectrl", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, IsBinary(dir+"/"+tt.file), tt.file)
	}
	assert.False(t, IsBinary(dir), "a directory is not binary")
}

func TestRead_FIFOIsRefusedNotAwaited(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(dir+"/pipe", 0o644))
	assert.False(t, IsBinary(dir+"/pipe"))
	_, err := Read(context.Background(), dir, "pipe", 0, -1)
	fe, ok := IsError(err)
	require.True(t, ok, "an agent-facing message: %v", err)
	assert.Equal(t, "Path is not a regular file: "+dir+"/pipe. You can only read files", fe.Msg)
	assert.Contains(t, run(t, newTestEditor(t, dir), EditRequest{Command: CmdView, Path: dir + "/pipe"}), "ERROR:\nRan into ")
}

func TestWrite_FIFOIsRefusedNotAwaited(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(dir+"/pipe", 0o644))
	require.NoError(t, os.Symlink("pipe", dir+"/link"))
	for _, name := range []string{"pipe", "link"} {
		err := Write(context.Background(), dir, name, "x", 0, -1, chown.Keep)
		fe, ok := IsError(err)
		require.True(t, ok, "an agent-facing message: %v", err)
		assert.Equal(t, "Path is not a regular file: "+dir+"/"+name+". You can only write to files", fe.Msg)
	}
	fi, err := os.Lstat(dir + "/pipe")
	require.NoError(t, err)
	assert.Equal(t, fs.ModeNamedPipe, fi.Mode().Type(), "the FIFO is left alone")
}

func TestRead_LargeFileAsksForARangeAndStreamsOne(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/big.txt"
	f, err := os.Create(p)
	require.NoError(t, err)
	line := strings.Repeat("x", 99) + "\n"
	n := int(MaxReadSize/int64(len(line))) + 1000
	w := bufio.NewWriter(f)
	for i := range n {
		fmt.Fprintf(w, "%07d%s", i, line[7:])
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())

	_, err = Read(context.Background(), dir, "big.txt", 0, -1)
	fe, ok := IsError(err)
	require.True(t, ok, "an agent-facing message: %v", err)
	assert.Contains(t, fe.Msg, "File is too large to read whole: "+p)
	assert.Contains(t, fe.Msg, "set start and end")

	got, err := Read(context.Background(), dir, "big.txt", 5, 7)
	require.NoError(t, err)
	assert.Equal(t, "0000005"+line[7:]+"0000006"+line[7:], got)
	got, err = Read(context.Background(), dir, "big.txt", n+5, n+9)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%07d%s", n-2, line[7:])+fmt.Sprintf("%07d%s", n-1, line[7:]), got,
		"past the end, the arithmetic of a small file's read")
	_, err = Read(context.Background(), dir, "big.txt", 1, -1)
	fe, ok = IsError(err)
	require.True(t, ok, "a range over the limit: %v", err)
	assert.Contains(t, fe.Msg, "File is too large to read whole")
}

func TestEachLine_TranslatesNewlinesAcrossChunks(t *testing.T) {
	text := strings.Repeat("a", lineChunk-1) + "\r\nb\rc\r\r\nd"
	var got []string
	var cur strings.Builder
	require.NoError(t, eachLine(context.Background(), strings.NewReader(text), func(part []byte, ends bool) bool {
		cur.Write(part)
		if ends {
			got = append(got, cur.String())
			cur.Reset()
		}
		return true
	}))
	assert.Equal(t, splitLinesKeepEnds(universalNewlines(text)), got)
}

// With a sandbox user's rights (the server root, see package asuser), a
// file the user may write but not give back to its owner, or whose
// directory the user may not write, is written in place and keeps its
// owner and mode, as the user's own shell would leave it.
func TestWrite_AsSandboxUserKeepsAnotherOwnersFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	nobody := &asuser.User{UID: 65534, GID: 65534}
	parent := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(parent), 0o755))
	require.NoError(t, os.Chmod(parent, 0o755))
	for name, dirMode := range map[string]fs.FileMode{"open directory": 0o777, "closed directory": 0o755} {
		t.Run(name, func(t *testing.T) {
			dir, err := os.MkdirTemp(parent, "d")
			require.NoError(t, err)
			require.NoError(t, os.Chmod(dir, dirMode))
			p := dir + "/shared.txt"
			require.NoError(t, os.WriteFile(p, []byte("old\n"), 0o666))
			require.NoError(t, os.Chmod(p, 0o666))
			err = nobody.Do(func() error {
				return Write(context.Background(), dir, "shared.txt", "new", 0, -1, chown.To(65534, 65534))
			})
			require.NoError(t, err)
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, "new\n", string(data))
			fi, err := os.Stat(p)
			require.NoError(t, err)
			assert.EqualValues(t, 0, fi.Sys().(*syscall.Stat_t).Uid, "still root's")
			assert.Equal(t, fs.FileMode(0o666), fi.Mode().Perm())
		})
	}
}
