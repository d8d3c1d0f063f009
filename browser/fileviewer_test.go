package browser

import (
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/asuser"
	"github.com/actionserver/actionserver/internal/testpdf"
)

// onePixelPNG is a valid 1x1 PNG.
var onePixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")

func TestFileViewer_ServesFilesAsPages(t *testing.T) {
	dir := t.TempDir()
	urlFile := filepath.Join(dir, "server-url")
	v, err := StartFileViewer(40000, urlFile, nil, slog.New(slog.DiscardHandler))
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

func TestFileViewer_ServesLocalPDFJSWhenInstalled(t *testing.T) {
	installed := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(installed, "pdf.js"), []byte("var pdfjsLib = {};"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(installed, "pdf.worker.min.js"), []byte("// worker"), 0o644))
	workerOnly := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(workerOnly, "pdf.worker.js"), []byte("// worker"), 0o644))
	doc := filepath.Join(t.TempDir(), "doc.pdf")
	require.NoError(t, os.WriteFile(doc, testpdf.Pages("Hello PDF"), 0o644))

	tests := []struct {
		name      string
		dir       string
		local     bool
		lib, work string // served bodies, when local
	}{
		{"installed", installed, true, "var pdfjsLib = {};", "// worker"},
		{"missing", filepath.Join(installed, "nothing-here"), false, "", ""},
		{"worker without library", workerOnly, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := startFileViewer(40000, "", nil, slog.New(slog.DiscardHandler), tt.dir)
			require.NoError(t, err)
			defer v.Close()
			get := func(path string) (*http.Response, string) {
				resp, err := http.Get(v.URL + path)
				require.NoError(t, err)
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp, string(b)
			}

			resp, page := get("/view?path=" + url.QueryEscape(doc))
			require.Equal(t, http.StatusOK, resp.StatusCode, page)
			for route, body := range map[string]string{"/pdfjs/pdf.js": tt.lib, "/pdfjs/pdf.worker.js": tt.work} {
				// Static, at the root: the page loads them by absolute path.
				resp, err := http.Get(strings.TrimSuffix(v.URL, "/"+v.token) + route)
				require.NoError(t, err)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got := string(b)
				if !tt.local {
					assert.Equal(t, http.StatusNotFound, resp.StatusCode, route)
					continue
				}
				assert.Equal(t, http.StatusOK, resp.StatusCode, route)
				assert.Equal(t, "text/javascript; charset=utf-8", resp.Header.Get("Content-Type"), route)
				assert.Equal(t, body, got, route)
			}
			if tt.local {
				assert.Contains(t, page, `<script src="/pdfjs/pdf.js"></script>`)
				assert.Contains(t, page, `workerSrc = "/pdfjs/pdf.worker.js"`)
				assert.NotContains(t, page, "cdnjs")
			} else {
				assert.Contains(t, page, `<script src="https://cdnjs.cloudflare.com/ajax/libs/pdf.js/3.11.174/pdf.min.js"></script>`)
				assert.Contains(t, page, `workerSrc = "https://cdnjs.cloudflare.com/ajax/libs/pdf.js/3.11.174/pdf.worker.min.js"`)
			}
		})
	}
}

// The pages of a PDF are drawn on canvases by the pdf.js installed on this
// machine, without the network; the canvases are in the accessibility tree.
func TestFileViewer_DrawsPDFWithInstalledPDFJS(t *testing.T) {
	if findPDFJS(pdfjsDir).lib == "" {
		t.Skip("pdf.js is not installed (Debian package libjs-pdf)")
	}
	v, err := StartFileViewer(40000, "", nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer v.Close()
	doc := filepath.Join(t.TempDir(), "doc.pdf")
	require.NoError(t, os.WriteFile(doc, testpdf.Pages("Hello PDF"), 0o644))
	b, _ := newTestBrowser(t)

	obs, err := b.Interact(stepCtx(t, 60*time.Second), fmt.Sprintf("goto(%q)", v.URL+"/view?path="+doc), false)
	require.NoError(t, err)
	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Contains(t, obs.Content, "RootWebArea 'File Viewer - doc.pdf'")
	assert.NotContains(t, obs.Content, "Error loading file")
	assert.Regexp(t, `(?m)^\t*\[\d+\] Canvas ''$`, obs.Content)
}

func TestFileViewer_AnswersOnlyUnderItsToken(t *testing.T) {
	v, err := StartFileViewer(40000, "", nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer v.Close()
	png := filepath.Join(t.TempDir(), "a.png")
	require.NoError(t, os.WriteFile(png, onePixelPNG, 0o644))
	origin := strings.TrimSuffix(v.URL, "/"+v.token)
	require.Regexp(t, `^http://localhost:\d+$`, origin)
	require.Len(t, v.token, 32)
	for u, want := range map[string]int{
		v.URL + "/view?path=" + png:                                  http.StatusOK,
		origin + "/view?path=" + png:                                 http.StatusNotFound,
		origin + "/" + strings.Repeat("0", 32) + "/view?path=" + png: http.StatusNotFound,
		origin + "/": http.StatusOK,
	} {
		resp, err := http.Get(u)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, u)
	}
}

func TestFileViewer_ReadsWithTheSandboxUsersRights(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o777))
	secret := filepath.Join(dir, "secret.png")
	require.NoError(t, os.WriteFile(secret, onePixelPNG, 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "a.png")))
	mine := filepath.Join(dir, "mine.png")
	require.NoError(t, os.WriteFile(mine, onePixelPNG, 0o644))

	v, err := StartFileViewer(40000, "", &asuser.User{UID: 65534, GID: 65534}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer v.Close()
	get := func(p string) (int, string) {
		resp, err := http.Get(v.URL + "/view?path=" + url.QueryEscape(p))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := get(filepath.Join(dir, "a.png"))
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.Contains(t, body, "permission denied")
	assert.NotContains(t, body, base64.StdEncoding.EncodeToString(onePixelPNG))
	status, body = get(mine)
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, base64.StdEncoding.EncodeToString(onePixelPNG))
}

func TestOverwrite_ReplacesTheWholeContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "url")
	require.NoError(t, overwrite(path, []byte("http://localhost:123456789")))
	require.NoError(t, overwrite(path, []byte("http://localhost:80")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "http://localhost:80", string(got), "no tail of the longer, older address")
}
