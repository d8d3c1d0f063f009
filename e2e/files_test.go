package e2e

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/event"
)

func TestFiles_WriteReadThroughTheShellsDirectory(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	_, err := s.Client.Run(ctx, "mkdir sub && cd sub", client.RunOptions{})
	require.NoError(t, err)

	require.NoError(t, s.Client.Write(ctx, "hello.sh", `echo "Hello, World!"`))
	obs, err := s.Client.Execute(ctx, event.NewFileRead("hello.sh"))
	require.NoError(t, err)
	read := obs.(*event.FileReadResult)
	assert.Equal(t, "echo \"Hello, World!\"\n", read.Content)
	assert.Equal(t, filepath.Join(s.WorkDir, "sub", "hello.sh"), read.Path, "relative paths follow the shell's cd")

	obs, err = s.Client.Execute(ctx, event.NewFileRead("nope.txt"))
	require.NoError(t, err)
	require.IsType(t, &event.ErrorObservation{}, obs)
	missing := filepath.Join(s.WorkDir, "sub", "nope.txt")
	assert.Equal(t, fmt.Sprintf("File not found: %s. Your current working directory is %s.", missing, filepath.Join(s.WorkDir, "sub")), obs.Text())

	bin := filepath.Join(s.WorkDir, "blob.bin")
	require.NoError(t, os.WriteFile(bin, []byte{0, 1, 2, 0, 0xff, 0}, 0o644))
	for _, impl := range []string{event.ImplDefault, event.ImplOHACI} {
		a := event.NewFileRead(bin)
		a.ImplSource = impl
		obs, err = s.Client.Execute(ctx, a)
		require.NoError(t, err)
		assert.Equal(t, &event.ErrorObservation{Content: "ERROR_BINARY_FILE"}, obs, impl)
	}

	// oh_aci reads are editor views; their errors are content, not error
	// observations.
	a := event.NewFileRead(missing)
	a.ImplSource = event.ImplOHACI
	obs, err = s.Client.Execute(ctx, a)
	require.NoError(t, err)
	require.IsType(t, &event.FileReadResult{}, obs)
	assert.Equal(t, "ERROR:\nInvalid `path` parameter: "+missing+". The path "+missing+" does not exist. Please provide a valid path.", obs.Text())
	assert.Equal(t, missing, obs.(*event.FileReadResult).Path)
}

func TestFiles_EditObservation(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	p := filepath.Join(s.WorkDir, "test.txt")

	create := event.NewFileEdit("create", p)
	create.FileText = strPtr("This is a test file.\nThis file is for testing purposes.")
	res, err := s.Client.Edit(ctx, create)
	require.NoError(t, err)
	assert.Equal(t, "File created successfully at: "+p, res.Content)
	require.NotNil(t, res.Diff)
	assert.Equal(t, "--- "+p+"\n+++ "+p+"\n@@ -1 +1,2 @@\n-\n+This is a test file.\n+This file is for testing purposes.", *res.Diff)

	replace := event.NewFileEdit("str_replace", p)
	replace.OldStr, replace.NewStr = strPtr("test file"), strPtr("sample file")
	res, err = s.Client.Edit(ctx, replace)
	require.NoError(t, err)
	assert.Equal(t, "The file "+p+" has been edited. Here's the result of running `cat -n` on a snippet of "+p+":\n"+
		"     1\tThis is a sample file.\n     2\tThis file is for testing purposes.\n"+
		"Review the changes and make sure they are as expected. Edit the file again if necessary.", res.Content)
	assert.Equal(t, "test file", *res.OldContent, "old_content is the action's old_str")
	assert.Equal(t, "sample file", *res.NewContent)
	assert.False(t, res.PrevExist)
	assert.Equal(t, "--- "+p+"\n+++ "+p+"\n@@ -1 +1 @@\n-This is a test file.\n+This is a sample file.", *res.Diff)

	undo := event.NewFileEdit("undo_edit", p)
	res, err = s.Client.Edit(ctx, undo)
	require.NoError(t, err)
	assert.Contains(t, res.Content, "Last edit to "+p+" undone successfully.")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "This is a test file.\nThis file is for testing purposes.", string(data))

	res, err = s.Client.Edit(ctx, event.NewFileEdit("create", p+".new"))
	require.NoError(t, err)
	assert.Equal(t, "ERROR:\nParameter `file_text` is required for command: create.", res.Content)
	assert.Equal(t, "", *res.Diff)

	llm := event.NewFileEdit("", p)
	llm.ImplSource = event.ImplLLMBasedEdit
	_, err = s.Client.Edit(ctx, llm)
	var apiErr *client.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
	assert.True(t, strings.HasPrefix(apiErr.Detail, "Internal server error: "), apiErr.Detail)
}

func strPtr(s string) *string { return &s }

// postUpload sends one multipart upload the way the host does and returns
// the status and decoded body.
func postUpload(t *testing.T, s *server, name string, content []byte, dest, recursive string) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", name)
	require.NoError(t, err)
	_, err = fw.Write(content)
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	q := url.Values{"destination": {dest}}
	if recursive != "" {
		q.Set("recursive", recursive)
	}
	resp, err := http.Post(s.URL+"/upload_file?"+q.Encode(), mw.FormDataContentType(), &body)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// zipOf builds a zip in memory; an entry whose content starts with "->"
// is stored as a symlink to the rest.
func zipOf(t *testing.T, entries map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h := &zip.FileHeader{Name: n, Method: zip.Store}
		content := entries[n]
		if target, ok := strings.CutPrefix(content, "->"); ok {
			h.SetMode(os.ModeSymlink | 0o777)
			content = target
		}
		w, err := zw.CreateHeader(h)
		require.NoError(t, err)
		_, err = io.WriteString(w, content)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestUpload_FilesDirectoriesAndErrors(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)

	// A single file lands in the destination directory, created if needed,
	// and a second upload overwrites it.
	dest := filepath.Join(s.WorkDir, "new_dir", "deeper")
	status, out := postUpload(t, s, "test_file.txt", []byte("first"), dest, "false")
	require.Equal(t, http.StatusOK, status, out)
	assert.Equal(t, map[string]any{"filename": "test_file.txt", "destination": dest, "recursive": false}, out)
	status, _ = postUpload(t, s, "test_file.txt", []byte("second"), dest, "false")
	require.Equal(t, http.StatusOK, status)
	data, err := os.ReadFile(filepath.Join(dest, "test_file.txt"))
	require.NoError(t, err)
	assert.Equal(t, "second", string(data))

	// A directory goes as a zip named after its parent-relative layout.
	src := filepath.Join(t.TempDir(), "test_dir")
	require.NoError(t, os.MkdirAll(filepath.Join(src, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "file1.txt"), []byte("one"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "sub", "file2.txt"), []byte("two"), 0o644))
	require.NoError(t, s.Client.Upload(ctx, src, s.WorkDir, true, nil))
	data, err = os.ReadFile(filepath.Join(s.WorkDir, "test_dir", "sub", "file2.txt"))
	require.NoError(t, err)
	assert.Equal(t, "two", string(data))
	entries, err := os.ReadDir(s.WorkDir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasSuffix(e.Name(), ".zip"), "the uploaded zip is not kept: %s", e.Name())
	}

	cases := []struct {
		name, file, dest, recursive string
		status                      int
		detail                      string
	}{
		{"relative destination", "a.txt", "relative/dir", "false", 500, "400: Destination must be an absolute path"},
		{"recursive but not a zip", "a.txt", s.WorkDir, "true", 500, "400: Recursive uploads must be zip files"},
		{"recursive not a boolean", "a.txt", s.WorkDir, "maybe", 422, "Invalid request parameters"},
		{"not a zip though named so", "fake.zip", s.WorkDir, "false", 500, "zip"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := postUpload(t, s, tc.file, []byte("x"), tc.dest, tc.recursive)
			assert.Equal(t, tc.status, status)
			assert.Contains(t, out["detail"], tc.detail)
		})
	}

	// No file field at all.
	resp, err := http.Post(s.URL+"/upload_file?destination=/tmp", "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)
}

func TestUpload_ZipEscapesAreRefused(t *testing.T) {
	s := startServer(t, startOpts{})
	outside := t.TempDir()
	dest := filepath.Join(s.WorkDir, "extract")
	cases := map[string]map[string]string{
		"dot-dot":           {"ok.txt": "fine", "../../escaped.txt": "bad"},
		"absolute":          {"ok.txt": "fine", filepath.Join(outside, "abs.txt"): "bad"},
		"symlink out":       {"link": "->" + outside},
		"relative link out": {"sub/link": "->../../../.."},
		// Each link stays inside alone; through the first, the second
		// climbs out.
		"chained links": {"s": "->.", "s/t/l": "->../.."},
	}
	for name, entries := range cases {
		t.Run(name, func(t *testing.T) {
			status, out := postUpload(t, s, "evil.zip", zipOf(t, entries), dest, "true")
			assert.Equal(t, http.StatusInternalServerError, status)
			assert.Contains(t, out["detail"], "outside the destination")
			got, _ := os.ReadDir(dest)
			assert.Empty(t, got, "a refused archive writes nothing")
		})
	}
	got, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, got)
	_, err = os.Stat(filepath.Join(filepath.Dir(s.WorkDir), "escaped.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	// A symlink already in the destination cannot redirect a write either.
	require.NoError(t, os.MkdirAll(dest, 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(dest, "trap")))
	status, _ := postUpload(t, s, "trap.zip", zipOf(t, map[string]string{"trap/x.txt": "bad"}), dest, "true")
	assert.Equal(t, http.StatusInternalServerError, status)
	got, err = os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, got)

	// Nor can one that stays inside be used to climb out.
	require.NoError(t, os.Symlink(".", filepath.Join(dest, "self")))
	status, out := postUpload(t, s, "self.zip", zipOf(t, map[string]string{"self/t/l": "->../.."}), dest, "true")
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.Contains(t, out["detail"], "outside the destination")
	_, err = os.Lstat(filepath.Join(dest, "t"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestDownload_ZipLayoutAndErrors(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	root := filepath.Join(s.WorkDir, "knowledge")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "nested", "empty"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "knowledge.md"), []byte("# k"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "nested", "deep.txt"), []byte("deep"), 0o644))

	resp, err := http.Get(s.URL + "/download_files?path=" + url.QueryEscape(root))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Equal(t, "application/zip", resp.Header.Get("Content-Type"))
	assert.Equal(t, `attachment; filename=knowledge.zip`, resp.Header.Get("Content-Disposition"))
	assert.Equal(t, map[string]string{"knowledge.md": "# k", "nested/deep.txt": "deep"}, unzip(t, body),
		"names relative to the path, empty directories left out")

	var buf bytes.Buffer
	_, err = s.Client.Download(ctx, filepath.Join(root, "knowledge.md"), &buf, nil)
	require.NoError(t, err)
	assert.Empty(t, unzip(t, buf.Bytes()), "a regular file gives an empty archive, as upstream's")

	for path, want := range map[string]string{
		"relative/path":                   "400: Path must be an absolute path",
		filepath.Join(s.WorkDir, "ghost"): "404: File not found",
	} {
		_, err := s.Client.Download(ctx, path, io.Discard, nil)
		var apiErr *client.Error
		require.ErrorAs(t, err, &apiErr, path)
		assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
		assert.Equal(t, want, apiErr.Detail)
	}
}

func unzip(t *testing.T, data []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err)
		out[f.Name] = string(b)
	}
	return out
}

func TestListFiles(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	for _, d := range []string{"beta", "Alpha", ".hidden_dir"} {
		require.NoError(t, os.Mkdir(filepath.Join(s.WorkDir, d), 0o755))
	}
	for _, f := range []string{"b.txt", "A.txt", ".env", "beta/inner.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(s.WorkDir, f), nil, 0o644))
	}
	require.NoError(t, os.Symlink("/nonexistent/target", filepath.Join(s.WorkDir, "broken")))
	// The shell's cd does not move list_files' base.
	_, err := s.Client.Run(ctx, "cd /", client.RunOptions{})
	require.NoError(t, err)

	cases := map[string][]string{
		"":                                   {".hidden_dir/", "Alpha/", "beta/", ".env", "A.txt", "b.txt"},
		"beta":                               {"inner.txt"},
		filepath.Join(s.WorkDir, "beta"):     {"inner.txt"},
		"missing":                            {},
		filepath.Join(s.WorkDir, "b.txt"):    {},
		filepath.Join(s.WorkDir, "nope/nah"): {},
	}
	for path, want := range cases {
		got, err := s.Client.ListFiles(ctx, path)
		require.NoError(t, err, path)
		assert.Equal(t, want, got, "path %q", path)
	}

	// A body that is not an object is the client's mistake (upstream: 500).
	resp, err := http.Post(s.URL+"/list_files", "application/json", strings.NewReader("not json"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

// TestFiles_OwnedByTheSandboxUser checks that write, the editor's create
// and uploads give what they create to the sandbox user, so the agent's
// shell can change it.
func TestFiles_OwnedByTheSandboxUser(t *testing.T) {
	s, ws := startAsSandboxUser(t)
	uid := testUID
	ctx := ctxT(t)

	require.NoError(t, s.Client.Write(ctx, "made/by/write.txt", "x"))
	create := event.NewFileEdit("create", filepath.Join(ws, "created.txt"))
	create.FileText = strPtr("y")
	_, err := s.Client.Edit(ctx, create)
	require.NoError(t, err)
	status, out := postUpload(t, s, "up.txt", []byte("z"), filepath.Join(ws, "up", "here"), "false")
	require.Equal(t, http.StatusOK, status, out)
	status, out = postUpload(t, s, "tree.zip", zipOf(t, map[string]string{"tree/leaf.txt": "w"}), filepath.Join(ws, "zipped"), "true")
	require.Equal(t, http.StatusOK, status, out)

	for _, p := range []string{"made", "made/by", "made/by/write.txt", "created.txt", "up", "up/here", "up/here/up.txt",
		"zipped", "zipped/tree", "zipped/tree/leaf.txt"} {
		fi, err := os.Lstat(filepath.Join(ws, p))
		require.NoError(t, err, p)
		assert.EqualValues(t, uid, fi.Sys().(*syscall.Stat_t).Uid, p)
	}
	// And the agent can change them.
	obs, err := s.Client.Run(ctx, "echo more >> up/here/up.txt && echo more >> created.txt && echo ok", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "ok", obs.Content)
}

// serverPeakRSS returns the server's peak resident memory (VmHWM) in bytes.
func serverPeakRSS(t *testing.T, s *server) int64 {
	t.Helper()
	return serverMemory(t, s, "VmHWM")
}

// serverRSS returns the server's resident memory (VmRSS) in bytes.
func serverRSS(t *testing.T, s *server) int64 {
	t.Helper()
	return serverMemory(t, s, "VmRSS")
}

// serverMemory returns a memory figure of /proc/<pid>/status in bytes.
func serverMemory(t *testing.T, s *server, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc status", field)
	return 0
}

// TestTransfer_MemoryStaysBounded moves a few hundred MB each way and
// checks the server never held more than a few MB of it.
func TestTransfer_MemoryStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 600 MB")
	}
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	const size = 300 << 20
	src := filepath.Join(t.TempDir(), "big.bin")
	f, err := os.Create(src)
	require.NoError(t, err)
	// Not sparse: real bytes, so nothing can be skipped on either side.
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	for written := 0; written < size; written += len(chunk) {
		_, err := f.Write(chunk)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())

	require.NoError(t, s.Client.Upload(ctx, src, filepath.Join(s.WorkDir, "in"), false, nil))
	fi, err := os.Stat(filepath.Join(s.WorkDir, "in", "big.bin"))
	require.NoError(t, err)
	assert.EqualValues(t, size, fi.Size())

	n, err := s.Client.Download(ctx, filepath.Join(s.WorkDir, "in"), io.Discard, nil)
	require.NoError(t, err)
	assert.Greater(t, n, int64(size))

	peak := serverPeakRSS(t, s)
	t.Logf("server peak RSS after moving %d MB each way: %.1f MB", size>>20, float64(peak)/(1<<20))
	assert.Less(t, peak, int64(40<<20))
}

// inotifyFDs counts the server's open inotify instances.
func inotifyFDs(t *testing.T, s *server) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", s.cmd.Process.Pid)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

func TestWatch_EventsAndRelease(t *testing.T) {
	s := startServer(t, startOpts{})
	base := inotifyFDs(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	events, err := s.Client.Watch(ctx, s.WorkDir, true)
	require.NoError(t, err)
	assert.Equal(t, base+1, inotifyFDs(t, s), "the watch holds one inotify instance")

	// Changes made by the agent's shell, in a directory created after the
	// watch started. The file is made once the directory's creation has
	// been reported, by which time the directory is watched: a file that
	// comes and goes before then leaves nothing for inotify to report.
	seen := map[string]bool{}
	await := func(want ...string) {
		t.Helper()
		for !containsAll(seen, want) {
			select {
			case ev, ok := <-events:
				require.True(t, ok, "stream ended early; saw %v", seen)
				require.NoError(t, ev.Err)
				seen[ev.Op+" "+ev.Path] = true
			case <-ctx.Done():
				t.Fatalf("saw %v, want %v", seen, want)
			}
		}
	}
	_, err = s.Client.Run(ctx, "mkdir -p later", client.RunOptions{})
	require.NoError(t, err)
	await("create " + filepath.Join(s.WorkDir, "later"))
	_, err = s.Client.Run(ctx, "echo hi > later/new.txt && rm later/new.txt", client.RunOptions{})
	require.NoError(t, err)
	await("create "+filepath.Join(s.WorkDir, "later", "new.txt"), "remove "+filepath.Join(s.WorkDir, "later", "new.txt"))

	cancel()
	for range events {
	}
	require.Eventually(t, func() bool { return inotifyFDs(t, s) == base }, 5*time.Second, 20*time.Millisecond,
		"a client that goes away releases the watch")

	resp, err := http.Get(s.URL + "/watch?path=" + url.QueryEscape(filepath.Join(s.WorkDir, "ghost")))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func containsAll(seen map[string]bool, want []string) bool {
	for _, w := range want {
		if !seen[w] {
			return false
		}
	}
	return true
}

func TestWatch_CapsConcurrentWatchers(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	for i := 0; i < 64 && err == nil; i++ {
		_, err = s.Client.Watch(ctx, s.WorkDir, false)
	}
	var apiErr *client.Error
	require.ErrorAs(t, err, &apiErr, "the server must stop handing out watches at some point")
	assert.Equal(t, http.StatusTooManyRequests, apiErr.StatusCode)
	cancel()
	// Slots come back once the clients are gone.
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := s.Client.Watch(ctx, s.WorkDir, false)
		return err == nil
	}, 5*time.Second, 50*time.Millisecond)
}

func TestActionctl_Files(t *testing.T) {
	s := startServer(t, startOpts{})
	ctl := func(stdin string, args ...string) (string, string, int) {
		cmd := exec.Command(filepath.Join(binDir, "actionctl"), append([]string{"--url", s.URL}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if exitErr, ok := err.(*exec.ExitError); ok {
			code = exitErr.ExitCode()
		}
		return stdout.String(), stderr.String(), code
	}
	p := filepath.Join(s.WorkDir, "hello.py")

	_, _, code := ctl("", "edit", "create", p, "print('hi')\n")
	require.Equal(t, 0, code)
	out, _, code := ctl("", "edit", "str_replace", p, "'hi'", "'hello'")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "     1\tprint('hello')")
	out, _, _ = ctl("", "edit", "insert", p, "1", "print('bye')")
	assert.Contains(t, out, "     2\tprint('bye')")
	out, _, code = ctl("", "read", p)
	assert.Equal(t, 0, code)
	assert.Equal(t, "print('hello')\nprint('bye')\n", out)
	out, _, _ = ctl("", "read", "--range", "2,2", p)
	assert.Equal(t, "Here's the result of running `cat -n` on "+p+":\n     2\tprint('bye')\n", out)
	_, _, code = ctl("", "edit", "undo", p)
	assert.Equal(t, 0, code)
	_, errOut, code := ctl("", "edit", "create", p, "again")
	assert.Equal(t, 1, code, "editor errors exit 1")
	assert.Contains(t, errOut, "File already exists at: "+p)

	_, _, code = ctl("from stdin", "write", "notes/todo.txt")
	require.Equal(t, 0, code)
	data, err := os.ReadFile(filepath.Join(s.WorkDir, "notes", "todo.txt"))
	require.NoError(t, err)
	assert.Equal(t, "from stdin\n", string(data))
	_, errOut, code = ctl("", "read", "missing.txt")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "File not found")

	src := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(src, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "src", "a.go"), []byte("package a"), 0o644))
	_, errOut, code = ctl("", "upload", src, s.WorkDir)
	require.Equal(t, 0, code, errOut)
	out, _, _ = ctl("", "ls", "proj")
	assert.Equal(t, "src/\n", out)
	zipPath := filepath.Join(t.TempDir(), "proj.zip")
	_, errOut, code = ctl("", "download", filepath.Join(s.WorkDir, "proj"), zipPath)
	require.Equal(t, 0, code, errOut)
	zdata, err := os.ReadFile(zipPath)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"src/a.go": "package a"}, unzip(t, zdata))
	_, _, code = ctl("", "download", filepath.Join(s.WorkDir, "ghost"), zipPath)
	assert.Equal(t, 1, code)
	_, err = os.Stat(zipPath)
	assert.ErrorIs(t, err, os.ErrNotExist, "a failed download leaves no file")

	// watch prints changes live until it is stopped.
	watch := exec.Command(filepath.Join(binDir, "actionctl"), "--url", s.URL, "--json", "watch", s.WorkDir)
	stdout, err := watch.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, watch.Start())
	t.Cleanup(func() { watch.Process.Kill(); watch.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	target := filepath.Join(s.WorkDir, "seen.txt")
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case line := <-lines:
			var ev client.WatchEvent
			require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
			if ev.Path == target {
				return
			}
		case <-tick.C:
			// The watch may not be in place yet when the first write lands.
			os.WriteFile(target, []byte("x"), 0o644)
		case <-deadline:
			t.Fatal("actionctl watch printed no event for " + target)
		}
	}
}
