package browser

import (
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onePixelPNG is a valid 1x1 PNG.
var onePixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")

func TestFileViewer_ServesFilesAsPages(t *testing.T) {
	dir := t.TempDir()
	urlFile := filepath.Join(dir, "server-url")
	v, err := StartFileViewer(40000, urlFile, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer v.Close()
	written, err := os.ReadFile(urlFile)
	require.NoError(t, err)
	assert.Equal(t, v.URL, string(written), "no newline, as agents cat it")

	png := filepath.Join(dir, "test_image.png")
	require.NoError(t, os.WriteFile(png, onePixelPNG, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644))
	get := func(path string) (int, string) {
		u := v.URL + path
		resp, err := http.Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := get("/")
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"status": "File viewer server is running"}`, body)

	status, body = get("/view?path=" + url.QueryEscape(png))
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "<title>File Viewer - test_image.png</title>")
	assert.Contains(t, body, `src="data:image/png;base64,`+base64.StdEncoding.EncodeToString(onePixelPNG))

	for _, tc := range []struct {
		path   string
		status int
		text   string
	}{
		{"relative.png", 400, "Path must be absolute"},
		{filepath.Join(dir, "ghost.png"), 404, "File not found"},
		{dir, 400, "Path is a directory"},
		{filepath.Join(dir, "notes.txt"), 500, "Unsupported file extension: .txt"},
	} {
		status, body := get("/view?path=" + url.QueryEscape(tc.path))
		assert.Equal(t, tc.status, status, tc.path)
		assert.True(t, strings.Contains(body, tc.text), "%s: %s", tc.path, body)
	}
}
