package acceptance

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The copy ports check the server only as far as the host's copy_to and
// copy_from send what the host sends. These tests check that half against
// a stand-in server that records the request, so a copy test's failure
// points at the server, not at this emulation.

type uploadSeen struct {
	method, destination, recursive string
	filename, partType             string
	data                           []byte
}

func uploadRecorder(t *testing.T, seen *uploadSeen) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		seen.method = req.Method + " " + req.URL.Path
		seen.destination = req.URL.Query().Get("destination")
		seen.recursive = req.URL.Query().Get("recursive")
		mr, err := req.MultipartReader()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		part, err := mr.NextPart()
		if err != nil || part.FormName() != "file" {
			http.Error(w, "no file part", http.StatusBadRequest)
			return
		}
		seen.filename, seen.partType = part.FileName(), part.Header.Get("Content-Type")
		seen.data, _ = io.ReadAll(part)
		_, _ = w.Write([]byte(`{"filename": "x", "destination": "/", "recursive": false}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHostCopyTo_FileGoesAsMultipartFieldFile(t *testing.T) {
	var seen uploadSeen
	rt := &runtime{t: t, url: uploadRecorder(t, &seen).URL}
	src := filepath.Join(t.TempDir(), "test_file.txt")
	require.NoError(t, os.WriteFile(src, []byte("Hello, World!"), 0o644))

	require.NoError(t, rt.copyTo(src, "/workspace/new_dir", false))

	assert.Equal(t, "POST /upload_file", seen.method)
	assert.Equal(t, "/workspace/new_dir", seen.destination)
	assert.Equal(t, "false", seen.recursive)
	assert.Equal(t, "test_file.txt", seen.filename)
	assert.Equal(t, "text/plain", seen.partType)
	assert.Equal(t, "Hello, World!", string(seen.data))
}

func TestHostCopyTo_DirectoryGoesAsZipNamedFromItsParent(t *testing.T) {
	var seen uploadSeen
	rt := &runtime{t: t, url: uploadRecorder(t, &seen).URL}
	dir := filepath.Join(t.TempDir(), "test_dir")
	createHostTestDirWithFiles(t, dir)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub", "empty"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "f.txt"), []byte("deep"), 0o644))

	require.NoError(t, rt.copyTo(dir, "/workspace", true))

	assert.Equal(t, "true", seen.recursive)
	assert.Regexp(t, `^tmp\w+\.zip$`, seen.filename)
	assert.Equal(t, "application/zip", seen.partType)
	zr, err := zip.NewReader(bytes.NewReader(seen.data), int64(len(seen.data)))
	require.NoError(t, err)
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		assert.Equal(t, zip.Store, f.Method, f.Name)
	}
	sort.Strings(names)
	// Files only, the directory's own name first; empty directories are
	// not stored.
	assert.Equal(t, []string{"test_dir/file1.txt", "test_dir/file2.txt", "test_dir/sub/f.txt"}, names)
}

func TestHostCopyTo_HTTPErrorIsReturned(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"detail": "400: Destination must be an absolute path"}`, http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	rt := &runtime{t: t, url: srv.URL}
	src := filepath.Join(t.TempDir(), "f.txt")
	require.NoError(t, os.WriteFile(src, nil, 0o644))

	err := rt.copyTo(src, "relative", false)

	require.Error(t, err)
	assert.Contains(t, err.Error(), "RequestHTTPError: HTTP 500")
}

func TestHostCopyFrom_StreamsTheAnswerToATempZip(t *testing.T) {
	var gotPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		gotPath = req.Method + " " + req.URL.Path + " " + req.URL.Query().Get("path")
		_, _ = w.Write([]byte("zip bytes"))
	}))
	t.Cleanup(srv.Close)
	rt := &runtime{t: t, url: srv.URL}

	result, err := rt.copyFrom("/workspace/test_dir")

	require.NoError(t, err)
	assert.Equal(t, "GET /download_files /workspace/test_dir", gotPath)
	assert.Equal(t, ".zip", filepath.Ext(result))
	data, err := os.ReadFile(result)
	require.NoError(t, err)
	assert.Equal(t, "zip bytes", string(data))
}
