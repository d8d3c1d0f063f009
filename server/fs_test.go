package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
)

// fsCall sends one request to the file routes and returns status, headers
// and body.
func fsCall(t *testing.T, method, u string, body io.Reader, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	// The transport would otherwise ask for gzip and hide it.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

func q(p string) string { return url.QueryEscape(p) }

func TestFiles_PutThenGetWithRanges(t *testing.T) {
	_, base := newTestServer(t, true, nil)
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "data.bin")
	data := bytes.Repeat([]byte("abcdefghij"), 100_000)

	st, _, body := fsCall(t, http.MethodPut, base+"/files/content?mode=600&path="+q(p), bytes.NewReader(data), nil)
	require.Equal(t, http.StatusOK, st, string(body))
	var w api.FileWritten
	require.NoError(t, json.Unmarshal(body, &w))
	assert.Equal(t, int64(len(data)), w.Bytes)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	tests := []struct {
		name   string
		rng    string
		status int
		want   []byte
	}{
		{"whole", "", http.StatusOK, data},
		{"from an offset", "bytes=999990-", http.StatusPartialContent, data[999990:]},
		{"a span", "bytes=5-14", http.StatusPartialContent, data[5:15]},
		{"the last bytes", "bytes=-3", http.StatusPartialContent, data[len(data)-3:]},
		{"past the end", "bytes=2000000-", http.StatusRequestedRangeNotSatisfiable, nil},
		{"a span past the end", "bytes=2000000-2000010", http.StatusRequestedRangeNotSatisfiable, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tt.rng != "" {
				hdr["Range"] = tt.rng
			}
			st, h, body := fsCall(t, http.MethodGet, base+"/files/content?path="+q(p), nil, hdr)
			require.Equal(t, tt.status, st)
			if st == http.StatusRequestedRangeNotSatisfiable {
				assert.Equal(t, "bytes */1000000", h.Get("Content-Range"))
			}
			if tt.rng == "bytes=2000000-" {
				var eb api.ErrorBody
				require.NoError(t, json.Unmarshal(body, &eb))
				assert.Equal(t, api.CodeRangeUnsatisfied, eb.Code)
			}
			if tt.want != nil {
				assert.True(t, bytes.Equal(tt.want, body), "body of %d bytes", len(body))
				assert.Equal(t, len(tt.want), int(mustAtoi(t, h.Get("Content-Length"))))
				assert.Equal(t, "0600", h.Get(api.HeaderFileMode))
			}
		})
	}
}

func mustAtoi(t *testing.T, s string) int64 {
	var n int64
	require.NoError(t, json.Unmarshal([]byte(s), &n), "%q", s)
	return n
}

func TestFiles_GzipBothWays(t *testing.T) {
	_, base := newTestServer(t, true, nil)
	p := filepath.Join(t.TempDir(), "text.txt")
	data := []byte(strings.Repeat("compress me\n", 10_000))
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(data)
	zw.Close()
	st, _, body := fsCall(t, http.MethodPut, base+"/files/content?path="+q(p), &zb, map[string]string{"Content-Encoding": "gzip"})
	require.Equal(t, http.StatusOK, st, string(body))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, data, got, "stored decompressed")

	st, h, body := fsCall(t, http.MethodGet, base+"/files/content?gzip=true&path="+q(p), nil, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, "gzip", h.Get("Content-Encoding"))
	assert.Less(t, len(body), len(data)/10)
	zr, err := gzip.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	plain, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, data, plain)
}

func TestFiles_ResumedUploadAppendsAtOffset(t *testing.T) {
	_, base := newTestServer(t, true, nil)
	p := filepath.Join(t.TempDir(), "part")
	require.NoError(t, os.WriteFile(p, []byte("hello, wor"), 0o644))
	st, _, body := fsCall(t, http.MethodPut, base+"/files/content?offset=7&path="+q(p), strings.NewReader("world"), nil)
	require.Equal(t, http.StatusOK, st, string(body))
	var w api.FileWritten
	require.NoError(t, json.Unmarshal(body, &w))
	assert.Equal(t, api.FileWritten{Path: p, Bytes: 5, Size: 12}, w)
	b, _ := os.ReadFile(p)
	assert.Equal(t, "hello, world", string(b))
}

func TestFiles_EntryOperations(t *testing.T) {
	_, base := newTestServer(t, true, nil)
	dir := t.TempDir()
	post := func(route string, v any) (int, api.ErrorBody) {
		b, _ := json.Marshal(v)
		st, _, body := fsCall(t, http.MethodPost, base+route, bytes.NewReader(b), map[string]string{"Content-Type": "application/json"})
		var eb api.ErrorBody
		json.Unmarshal(body, &eb)
		return st, eb
	}
	st, _ := post("/files/mkdir", api.MkdirRequest{Path: filepath.Join(dir, "a/b"), Parents: true, Mode: "750"})
	require.Equal(t, http.StatusOK, st)
	st, eb := post("/files/mkdir", api.MkdirRequest{Path: filepath.Join(dir, "a/b")})
	assert.Equal(t, http.StatusConflict, st)
	assert.Equal(t, api.CodeExists, eb.Code)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a/b/f"), []byte("x"), 0o644))

	st, _ = post("/files/chmod", api.ChmodRequest{Path: filepath.Join(dir, "a/b/f"), Mode: "0755"})
	require.Equal(t, http.StatusOK, st)
	st, _, body := fsCall(t, http.MethodGet, base+"/files/stat?path="+q(filepath.Join(dir, "a/b/f")), nil, nil)
	require.Equal(t, http.StatusOK, st)
	var info api.FileInfo
	require.NoError(t, json.Unmarshal(body, &info))
	assert.Equal(t, "0755", info.Mode)
	assert.Equal(t, api.FileTypeFile, info.Type)
	assert.Equal(t, int64(1), info.Size)

	st, _ = post("/files/move", api.MoveRequest{From: filepath.Join(dir, "a/b/f"), To: filepath.Join(dir, "g")})
	require.Equal(t, http.StatusOK, st)
	st, _, body = fsCall(t, http.MethodGet, base+"/files/list?path="+q(dir), nil, nil)
	require.Equal(t, http.StatusOK, st)
	var list api.FileList
	require.NoError(t, json.Unmarshal(body, &list))
	var names []string
	for _, e := range list.Entries {
		names = append(names, e.Name+":"+e.Type+":"+e.Mode)
	}
	assert.Equal(t, []string{"a:dir:0755", "g:file:0755"}, names, "a parent made by mkdir -p gets 0755")
	st, _, body = fsCall(t, http.MethodGet, base+"/files/stat?path="+q(filepath.Join(dir, "a/b")), nil, nil)
	require.Equal(t, http.StatusOK, st)
	require.NoError(t, json.Unmarshal(body, &info))
	assert.Equal(t, "0750", info.Mode, "the directory asked for gets its mode")

	st, eb = post("/files/remove", api.RemoveRequest{Path: filepath.Join(dir, "a")})
	assert.Equal(t, http.StatusConflict, st, "a directory with contents needs recursive")
	assert.Equal(t, api.CodeConflict, eb.Code)
	st, _ = post("/files/remove", api.RemoveRequest{Path: filepath.Join(dir, "a"), Recursive: true})
	require.Equal(t, http.StatusOK, st)
	_, err := os.Stat(filepath.Join(dir, "a"))
	assert.True(t, os.IsNotExist(err))
}

func TestFiles_BadRequestsHaveClearCodes(t *testing.T) {
	_, base := newTestServer(t, true, nil)
	tests := []struct {
		name, method, route string
		status              int
		code                string
	}{
		{"no path", "GET", "/files/content", 400, api.CodeInvalid},
		{"a NUL byte", "GET", "/files/stat?path=a%00b", 400, api.CodeInvalid},
		{"out of the workspace", "GET", "/files/content?path=../../etc/passwd", 400, api.CodePathEscapes},
		{"missing", "GET", "/files/stat?path=/no/such/file", 404, api.CodeNotFound},
		{"a directory read as a file", "GET", "/files/content?path=/", 400, api.CodeInvalid},
		{"bad mode", "PUT", "/files/content?mode=999&path=/tmp/x-never", 400, api.CodeInvalid},
		{"bad offset", "PUT", "/files/content?offset=-1&path=/tmp/x-never", 400, api.CodeInvalid},
		{"unknown encoding", "PUT", "/files/content?path=/tmp/x-never", 400, api.CodeInvalid},
		{"remove the workspace", "POST", "/files/remove", 400, api.CodeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			hdr := map[string]string{}
			switch {
			case tt.name == "unknown encoding":
				hdr["Content-Encoding"] = "br"
				body = strings.NewReader("x")
			case tt.method == "POST":
				hdr["Content-Type"] = "application/json"
				body = strings.NewReader(`{"path": ".", "recursive": true}`)
			case tt.method == "PUT":
				body = strings.NewReader("x")
			}
			st, _, b := fsCall(t, tt.method, base+tt.route, body, hdr)
			assert.Equal(t, tt.status, st, string(b))
			var eb api.ErrorBody
			require.NoError(t, json.Unmarshal(b, &eb), string(b))
			assert.Equal(t, tt.code, eb.Code)
			assert.NotEmpty(t, eb.Detail)
		})
	}
	_, err := os.Stat("/tmp/x-never")
	assert.True(t, os.IsNotExist(err))
}

// TestFiles_FullDiskIs507AndLeavesNothing writes past a 1 MB tmpfs; it
// needs root to mount one and unmounts it when done.
func TestFiles_FullDiskIs507AndLeavesNothing(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("old"), 0o644))
	_, base := newTestServer(t, true, nil)
	st, _, b := fsCall(t, http.MethodPut, base+"/files/content?path="+q(filepath.Join(dir, "f")), bytes.NewReader(make([]byte, 4<<20)), nil)
	assert.Equal(t, http.StatusInsufficientStorage, st)
	var eb api.ErrorBody
	require.NoError(t, json.Unmarshal(b, &eb))
	assert.Equal(t, api.CodeNoSpace, eb.Code)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left")
	old, _ := os.ReadFile(filepath.Join(dir, "f"))
	assert.Equal(t, "old", string(old))
}

func TestFiles_HeadGivesTheHeadersOnly(t *testing.T) {
	_, base := newTestServer(t, true, nil)
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("twelve bytes"), 0o640))
	st, h, body := fsCall(t, http.MethodHead, base+"/files/content?path="+q(p), nil, nil)
	require.Equal(t, http.StatusOK, st)
	assert.Empty(t, body)
	assert.Equal(t, "12", h.Get("Content-Length"))
	assert.Equal(t, "0640", h.Get(api.HeaderFileMode))
	assert.Equal(t, "bytes", h.Get("Accept-Ranges"))
	assert.NotEmpty(t, h.Get("ETag"))
}
