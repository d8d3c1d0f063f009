package e2e

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/event"
)

// nobodyUID is the unprivileged uid the non-root server runs as.
const nobodyUID = 65534

// startFilesAsNonRoot runs the server itself as an unprivileged uid, in a
// workspace that uid owns: its file actions have that uid's rights and no
// switch happens. When the tests are not root the server is simply theirs.
func startFilesAsNonRoot(t *testing.T, env []string, extraArgs ...string) (*server, string) {
	t.Helper()
	if os.Getuid() != 0 {
		ws := t.TempDir()
		return startServer(t, startOpts{workDir: ws, env: env, args: append([]string{"--working-dir", ws, "--no-enable-browser"}, extraArgs...)}), ws
	}
	require.NoError(t, os.Chmod(binDir, 0o755)) // the binary must be reachable
	parent, err := os.MkdirTemp("", "e2e-nonroot-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(parent) })
	require.NoError(t, os.Chmod(parent, 0o755))
	ws, home := filepath.Join(parent, "workspace"), filepath.Join(parent, "home")
	for _, d := range []string{ws, home} {
		require.NoError(t, os.Mkdir(d, 0o755))
		require.NoError(t, os.Chown(d, nobodyUID, nobodyUID))
	}
	args := append([]string{"--working-dir", ws, "--no-enable-browser"}, extraArgs...)
	return startServer(t, startOpts{workDir: ws, args: args, env: append([]string{"HOME=" + home}, env...),
		wrap: []string{"setpriv", "--reuid=" + fmt.Sprint(nobodyUID), "--regid=" + fmt.Sprint(nobodyUID), "--clear-groups"}}), ws
}

// forbidden is what a sandbox user must not reach: a root-only file in a
// directory anyone may enter, and a root-only directory with a file in it.
// Both hold marker, so an answer that leaks them shows it.
type forbidden struct {
	file, dir, dirFile, marker string
}

func makeForbidden(t *testing.T) forbidden {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("a root-only file needs root")
	}
	// One level deeper than needed: a path that climbs out of parent
	// lands in top, which no sandbox user may write, not in /tmp.
	top, err := os.MkdirTemp("", "e2e-forbidden-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(top) })
	require.NoError(t, os.Chmod(top, 0o755))
	parent := filepath.Join(top, "deep")
	require.NoError(t, os.Mkdir(parent, 0o755))
	f := forbidden{file: filepath.Join(parent, "secret.png"), dir: filepath.Join(parent, "private"),
		marker: fmt.Sprintf("SECRET-%d-%d", os.Getpid(), time.Now().UnixNano())}
	f.dirFile = filepath.Join(f.dir, "inside.txt")
	require.NoError(t, os.WriteFile(f.file, []byte(f.marker+"\n"), 0o600))
	require.NoError(t, os.Mkdir(f.dir, 0o700))
	require.NoError(t, os.WriteFile(f.dirFile, []byte(f.marker+"\n"), 0o600))
	return f
}

// untouched checks that nothing forbidden changed.
func (f forbidden) untouched(t *testing.T) {
	t.Helper()
	for _, p := range []string{f.file, f.dirFile} {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, f.marker+"\n", string(data), "%s was written", p)
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.EqualValues(t, 0, fi.Sys().(*syscall.Stat_t).Uid, "%s changed owner", p)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "%s changed mode", p)
	}
	fi, err := os.Stat(f.dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "%s changed mode", f.dir)
	entries, err := os.ReadDir(f.dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "something was created in the root-only directory")
	entries, err = os.ReadDir(filepath.Dir(f.file))
	require.NoError(t, err)
	assert.Len(t, entries, 2, "something was created beside the root-only file")
}

// plant makes the links an agent would make in its workspace.
func (f forbidden) plant(t *testing.T, ws string) {
	t.Helper()
	for name, target := range map[string]string{"a.png": f.file, "private": f.dir, "inside.txt": f.dirFile} {
		require.NoError(t, os.Symlink(target, filepath.Join(ws, name)))
	}
}

// TestFileRights_RootFollowsNoLinkPastTheSandboxUser: with the server root
// and the shells a sandbox user, every file route reaches only what that
// user could, whatever links the agent planted.
func TestFileRights_RootFollowsNoLinkPastTheSandboxUser(t *testing.T) {
	f := makeForbidden(t)
	s, ws := startAsSandboxUser(t)
	f.plant(t, ws)
	assertNoRouteReaches(t, s, ws, f)

	// What the user may do still works, and belongs to the user.
	ctx := ctxT(t)
	require.NoError(t, s.Client.Write(ctx, filepath.Join(ws, "mine/new.txt"), "hello"))
	fi, err := os.Stat(filepath.Join(ws, "mine/new.txt"))
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, [2]uint32{testUID, testUID}, [2]uint32{st.Uid, st.Gid}, "upstream's <uid>:<uid>")
	got, err := s.Client.Read(ctx, filepath.Join(ws, "mine/new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello\n", got)
}

func TestFileRights_NonRootServerReachesOnlyItsOwn(t *testing.T) {
	f := makeForbidden(t)
	s, ws := startFilesAsNonRoot(t, nil)
	f.plant(t, ws)
	assertNoRouteReaches(t, s, ws, f)
}

// assertNoRouteReaches drives every file route at the planted links.
func assertNoRouteReaches(t *testing.T, s *server, ws string, f forbidden) {
	t.Helper()
	ctx := ctxT(t)
	leaks := func(what, text string) {
		t.Helper()
		assert.NotContains(t, text, f.marker, "%s leaked the secret", what)
	}
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}

	for _, p := range []string{filepath.Join(ws, "a.png"), filepath.Join(ws, "inside.txt"), filepath.Join(ws, "private/inside.txt"), f.file, f.dirFile} {
		got, err := s.Client.Read(ctx, p)
		assert.Error(t, err, "read %s", p)
		leaks("read "+p, got+errText(err))
		view := event.NewFileRead(p)
		view.ImplSource = event.ImplOHACI
		obs, err := s.Client.Execute(ctx, view)
		if err == nil {
			leaks("view "+p, obs.Text())
		}
		err = s.Client.Write(ctx, p, "pwned")
		assert.Error(t, err, "write %s", p)
		for _, cmd := range []string{"create", "str_replace", "insert"} {
			e := event.NewFileEdit(cmd, p)
			e.FileText, e.OldStr, e.NewStr = strPtr("pwned"), strPtr("SECRET-"), strPtr("pwned")
			if cmd == "insert" {
				e.OldStr, e.InsertLine = nil, &event.InsertLine{Raw: "0"}
			}
			res, err := s.Client.Edit(ctx, e)
			if err == nil {
				leaks("edit "+cmd, res.Content)
			}
		}
		var buf bytes.Buffer
		_, err = s.Client.Download(ctx, p, &buf, nil)
		if err == nil && buf.Len() > 0 {
			for name, body := range unzip(t, buf.Bytes()) {
				leaks("download "+p+" "+name, body)
			}
		}
	}
	for _, dest := range []string{filepath.Join(ws, "private"), f.dir, filepath.Join(ws, "private/sub")} {
		status, out := postUpload(t, s, "up.txt", []byte("pwned"), dest, "false")
		assert.NotEqual(t, http.StatusOK, status, "upload into %s: %v", dest, out)
		status, out = postUpload(t, s, "tree.zip", zipOf(t, map[string]string{"z.txt": "pwned"}), dest, "true")
		assert.NotEqual(t, http.StatusOK, status, "zip upload into %s: %v", dest, out)
	}
	status, out := postUpload(t, s, "a.png", []byte("pwned"), ws, "false")
	if status == http.StatusOK {
		// The link itself was replaced, as the user may; the target not.
		fi, err := os.Lstat(filepath.Join(ws, "a.png"))
		require.NoError(t, err)
		assert.True(t, fi.Mode().IsRegular(), "%v", out)
	}
	for _, dir := range []string{filepath.Join(ws, "private"), f.dir} {
		names, err := s.Client.ListFiles(ctx, dir)
		require.NoError(t, err)
		assert.Empty(t, names, "list_files %s", dir)
		var buf bytes.Buffer
		_, err = s.Client.Download(ctx, dir, &buf, nil)
		if err == nil {
			assert.Empty(t, unzip(t, buf.Bytes()), "download %s", dir)
		}
	}
	f.untouched(t)
}

// TestFileViewer_OnlyWithTheBrowserUnderItsTokenWithTheUsersRights: the
// viewer runs only with the browser, answers only under the token of the
// address it writes, and shows only what the sandbox user can read.
func TestFileViewer_OnlyWithTheBrowserUnderItsTokenWithTheUsersRights(t *testing.T) {
	f := makeForbidden(t)
	urlFile := filepath.Join(t.TempDir(), "server-url")
	off := startServer(t, startOpts{env: []string{"FILE_VIEWER_URL_FILE=" + urlFile}})
	require.NoError(t, off.Client.WaitUntilAlive(ctxT(t)))
	_, err := os.Stat(urlFile)
	assert.ErrorIs(t, err, os.ErrNotExist, "no viewer without the browser")
	off.stop()

	_, ws := startAsSandboxUserEnv(t, []string{"FILE_VIEWER_URL_FILE=" + urlFile}, "--enable-browser")
	f.plant(t, ws)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "mine.png"), []byte("\x89PNG mine"), 0o644))
	var base string
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(urlFile)
		base = string(b)
		return err == nil && base != ""
	}, 30*time.Second, 20*time.Millisecond)
	require.Regexp(t, `^http://localhost:\d+/[0-9a-f]{32}$`, base)
	get := func(u string) (int, string) {
		resp, err := http.Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := get(base + "/view?path=" + url.QueryEscape(filepath.Join(ws, "mine.png")))
	assert.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, "File Viewer - mine.png")
	status, body = get(base + "/view?path=" + url.QueryEscape(filepath.Join(ws, "a.png")))
	assert.NotEqual(t, http.StatusOK, status)
	assert.NotContains(t, body, "U0VDUkVU", "the base64 of the secret's start")
	origin := base[:strings.LastIndexByte(base, '/')]
	status, _ = get(origin + "/view?path=" + url.QueryEscape(filepath.Join(ws, "mine.png")))
	assert.Equal(t, http.StatusNotFound, status, "no token, no file")
}

// startAsSandboxUserEnv is startAsSandboxUser with environment variables.
func startAsSandboxUserEnv(t *testing.T, env []string, extraArgs ...string) (*server, string) {
	t.Helper()
	s, ws := startAsSandboxUser(t, extraArgs...)
	if len(env) == 0 {
		return s, ws
	}
	// Restart with the environment: startAsSandboxUser made the user.
	s.stop()
	args := append([]string{"--working-dir", ws, "--username", testUser, "--user-id", fmt.Sprint(testUID), "--no-enable-browser"}, extraArgs...)
	return startServer(t, startOpts{workDir: ws, args: args, env: env}), ws
}

// TestRead_LargeFileAnswersWithARangeHintNotGigabytes: a default read of a
// file over 10 MB answers an error observation that says how to read a
// range, a range of it streams, and the server's memory stays small.
func TestRead_LargeFileAnswersWithARangeHintNotGigabytes(t *testing.T) {
	for _, start := range serverModes {
		t.Run(start.name, func(t *testing.T) {
			s, ws := start.run(t)
			ctx := ctxT(t)
			p := filepath.Join(ws, "big.log")
			fh, err := os.Create(p)
			require.NoError(t, err)
			line := strings.Repeat("y", 79) + "\n"
			chunk := strings.Repeat(line, 1<<14) // 1.25 MiB
			for range 64 {                       // 80 MiB
				_, err = fh.WriteString(chunk)
				require.NoError(t, err)
			}
			require.NoError(t, fh.Close())
			require.NoError(t, os.Chmod(p, 0o644))
			before := serverPeakRSS(t, s)

			_, err = s.Client.Read(ctx, p)
			var oe *client.ObservationError
			require.ErrorAs(t, err, &oe)
			assert.Contains(t, oe.Observation.Text(), "File is too large to read whole: "+p)
			assert.Contains(t, oe.Observation.Text(), "set start and end")

			ranged := event.NewFileRead(p)
			ranged.Start, ranged.End = 1000, 1002
			obs, err := s.Client.Execute(ctx, ranged)
			require.NoError(t, err)
			r, ok := obs.(*event.FileReadResult)
			require.True(t, ok, "%T: %s", obs, obs.Text())
			assert.Equal(t, line+line, r.Content)
			grown := serverPeakRSS(t, s) - before
			assert.Less(t, grown, int64(40<<20), "peak RSS grew by %d MiB reading an 80 MiB file", grown>>20)
		})
	}
}

// TestWrite_FIFOAnswersAtOnce: a write to a FIFO used to wait forever for
// a writer (a goroutine and a connection per request).
func TestWrite_FIFOAnswersAtOnce(t *testing.T) {
	for _, start := range serverModes {
		t.Run(start.name, func(t *testing.T) {
			s, ws := start.run(t)
			p := filepath.Join(ws, "pipe")
			require.NoError(t, syscall.Mkfifo(p, 0o666))
			require.NoError(t, os.Chmod(p, 0o666))
			ctx, cancel := context.WithTimeout(ctxT(t), 15*time.Second)
			defer cancel()
			err := s.Client.Write(ctx, p, "x")
			require.False(t, errors.Is(err, context.DeadlineExceeded), "the write waited on the FIFO")
			var oe *client.ObservationError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "Path is not a regular file: "+p+". You can only write to files", oe.Observation.Text())
			_, err = s.Client.Read(ctx, p)
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "Path is not a regular file: "+p+". You can only read files", oe.Observation.Text())
		})
	}
}

// serverModes are the ways a server runs: root with a sandbox user, and
// as an unprivileged user of its own.
var serverModes = []struct {
	name string
	run  func(t *testing.T) (*server, string)
}{
	{"root with a sandbox user", func(t *testing.T) (*server, string) { return startAsSandboxUser(t) }},
	{"non-root", func(t *testing.T) (*server, string) { return startFilesAsNonRoot(t, nil) }},
}

// TestDownload_FollowsATopLevelLinkToADirectory, as upstream's os.walk.
func TestDownload_FollowsATopLevelLinkToADirectory(t *testing.T) {
	for _, mode := range serverModes {
		t.Run(mode.name, func(t *testing.T) {
			s, ws := mode.run(t)
			require.NoError(t, os.MkdirAll(filepath.Join(ws, "real/sub"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "real/a.txt"), []byte("a"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "real/sub/b.txt"), []byte("b"), 0o644))
			require.NoError(t, os.Symlink("real", filepath.Join(ws, "link")))
			var buf bytes.Buffer
			_, err := s.Client.Download(ctxT(t), filepath.Join(ws, "link"), &buf, nil)
			require.NoError(t, err)
			assert.Equal(t, map[string]string{"a.txt": "a", "sub/b.txt": "b"}, unzip(t, buf.Bytes()))
		})
	}
}

// bombOf is a valid zip of one entry of size bytes of zeros (a multiple of
// 1 MiB), built without compressing them all: the deflate blocks of a MiB
// of zeros that follows zeros are repeated.
func bombOf(t *testing.T, size int64) []byte {
	t.Helper()
	var first, again, end bytes.Buffer
	fw, err := flate.NewWriter(&first, flate.BestCompression)
	require.NoError(t, err)
	mib := make([]byte, 1<<20)
	_, err = fw.Write(mib)
	require.NoError(t, err)
	require.NoError(t, fw.Flush())
	fw.Reset(&again)
	for range 2 {
		again.Reset()
		_, err = fw.Write(mib)
		require.NoError(t, err)
		require.NoError(t, fw.Flush())
	}
	block := bytes.Clone(again.Bytes())
	fw.Reset(&end)
	require.NoError(t, fw.Close())
	var data bytes.Buffer
	data.Write(first.Bytes())
	for range size>>20 - 1 {
		data.Write(block)
	}
	data.Write(end.Bytes())
	crc := crc32.NewIEEE()
	for range size >> 20 {
		crc.Write(mib)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "zeros.bin", Method: zip.Deflate,
		CompressedSize64: uint64(data.Len()), UncompressedSize64: uint64(size), CRC32: crc.Sum32()})
	require.NoError(t, err)
	_, err = w.Write(data.Bytes())
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return out.Bytes()
}

// TestUpload_ZipBombIsRefusedWith413: an archive that would unpack far
// beyond its size answers 413 and writes nothing.
func TestUpload_ZipBombIsRefusedWith413(t *testing.T) {
	bomb := bombOf(t, 1<<30)
	require.Less(t, len(bomb), 2<<20, "a bomb: 1 GiB from under 2 MiB")
	small := bombOf(t, 8<<20)
	for _, mode := range serverModes {
		t.Run(mode.name, func(t *testing.T) {
			s, ws := mode.run(t)
			dest := filepath.Join(ws, "unpacked")
			status, out := postUpload(t, s, "bomb.zip", bomb, dest, "true")
			assert.Equal(t, http.StatusRequestEntityTooLarge, status, out)
			assert.Contains(t, out["detail"], "unpacks to more than allowed")
			entries, _ := os.ReadDir(dest)
			assert.Empty(t, entries)

			status, out = postUpload(t, s, "small.zip", small, dest, "true")
			assert.Equal(t, http.StatusOK, status, "an ordinary archive still unpacks: %v", out)
		})
	}
}

// TestUpload_ClientMistakesAreNotServerFaults: a NUL byte or an over-long
// name in an upload is the client's mistake, worded as upstream words its
// own 400s on this route (inside a 500, which the host does not tell
// apart), not a raw fault.
func TestUpload_ClientMistakesAreNotServerFaults(t *testing.T) {
	s := startServer(t, startOpts{})
	for name, tc := range map[string]struct {
		file, dest string
		status     int
		detail     string
	}{
		// The multipart parser drops such a name: no file field.
		"NUL in the name": {"a\x00b.txt", s.WorkDir, http.StatusUnprocessableEntity, "Invalid request parameters"},
		"name too long":   {strings.Repeat("n", 300) + ".txt", s.WorkDir, http.StatusInternalServerError, "400: Invalid file name"},
		"NUL in the dest": {"a.txt", s.WorkDir + "/x\x00y", http.StatusInternalServerError, "400: Invalid path"},
		"dest too long":   {"a.txt", s.WorkDir + "/" + strings.Repeat("d", 300), http.StatusInternalServerError, "400: Invalid path"},
	} {
		t.Run(name, func(t *testing.T) {
			status, out := postUpload(t, s, tc.file, []byte("x"), tc.dest, "false")
			assert.Equal(t, tc.status, status)
			assert.Contains(t, out["detail"], tc.detail)
		})
	}
	for _, p := range []string{s.WorkDir + "/x\x00y", s.WorkDir + "/" + strings.Repeat("d", 300)} {
		_, err := s.Client.Download(ctxT(t), p, io.Discard, nil)
		var apiErr *client.Error
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, "404: File not found", apiErr.Detail, "upstream's os.path.exists is false")
	}
}

// TestWatch_DirectoryCapIsReported: a recursive watch of a tree with more
// directories than one watch may take watches up to the cap and tells the
// client, with one "limit" event, where it stopped.
func TestWatch_DirectoryCapIsReported(t *testing.T) {
	s := startServer(t, startOpts{})
	root := filepath.Join(s.WorkDir, "tree")
	for i := range 8300 { // over the cap of 8192
		require.NoError(t, os.MkdirAll(filepath.Join(root, fmt.Sprintf("d%02d", i/100), fmt.Sprintf("e%03d", i%100)), 0o755))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	events, err := s.Client.Watch(ctx, root, true)
	require.NoError(t, err)
	select {
	case ev, ok := <-events:
		require.True(t, ok, "stream ended")
		require.NoError(t, ev.Err)
		assert.Equal(t, "limit", ev.Op)
		assert.True(t, ev.IsDir)
		assert.True(t, strings.HasPrefix(ev.Path, root+"/"), ev.Path)
	case <-ctx.Done():
		t.Fatal("no limit event")
	}
}
