package browser

import (
	"context"
	crand "crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/actionserver/actionserver/internal/asuser"
)

// ServerURLFile is where agents find the file viewer's address; they then
// browse to <url>/view?path=/abs/file to look at a PDF or an image.
const ServerURLFile = "/tmp/oh-server-url"

// viewerExts are the types the file viewer shows.
var viewerExts = map[string]bool{".pdf": true, ".png": true, ".jpg": true, ".jpeg": true, ".gif": true}

// maxViewedFile is the largest file the viewer embeds in a page (as
// base64, so the page is a third larger).
const maxViewedFile = 64 << 20

// FileViewer is the small loopback-only HTTP server that shows a PDF or an
// image of the sandbox as a web page, so the browser can look at files.
//
// Its address carries a random token as the first path segment
// (http://localhost:<port>/<token>); /view answers only under it, so only
// whoever read the address (the agent's browser, through the URL file) can
// use it, not another local user or a web page guessing ports. Files are
// opened with the sandbox user's filesystem rights (see package asuser), so
// a link named a.png shows only what that user could read.
type FileViewer struct {
	// URL is http://localhost:<port>/<token>: agents append
	// "/view?path=/abs/file".
	URL   string
	token string
	as    *asuser.User
	srv   *http.Server
}

// StartFileViewer listens on a free loopback port between serverPort+1
// and serverPort+1024 (trying random ones, as upstream does), serves the
// viewer and writes its URL, token included, to urlFile (when not empty).
// Files are read with as's filesystem rights (nil: the server's own).
func StartFileViewer(serverPort int, urlFile string, as *asuser.User, log *slog.Logger) (*FileViewer, error) {
	return startFileViewer(serverPort, urlFile, as, log, pdfjsDir)
}

// startFileViewer is StartFileViewer with pdf.js looked for in pdfjs.
func startFileViewer(serverPort int, urlFile string, as *asuser.User, log *slog.Logger, pdfjs string) (*FileViewer, error) {
	var tok [16]byte
	if _, err := crand.Read(tok[:]); err != nil {
		return nil, fmt.Errorf("file viewer token: %w", err)
	}
	var l net.Listener
	var err error
	lo, hi := serverPort+1, min(serverPort+1024, 65535)
	for range 10 {
		port := lo
		if hi > lo {
			port += rand.IntN(hi - lo + 1)
		}
		if l, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			break
		}
	}
	if l == nil {
		// The range is taken: any free port will do.
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("file viewer: %w", err)
		}
	}
	token := hex.EncodeToString(tok[:])
	v := &FileViewer{URL: "http://localhost:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + "/" + token, token: token, as: as}
	mux := http.NewServeMux()
	status := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"File viewer server is running"}`))
	}
	mux.HandleFunc("GET /{$}", status)
	mux.HandleFunc("GET /{token}/{$}", v.withToken(status))
	mux.HandleFunc("GET /{token}/view", v.withToken(func(w http.ResponseWriter, r *http.Request) { v.viewFile(w, r, pdfjs) }))
	mux.HandleFunc("GET "+pdfjsLibRoute, func(w http.ResponseWriter, r *http.Request) {
		servePDFJS(w, r, findPDFJS(pdfjs).lib)
	})
	mux.HandleFunc("GET "+pdfjsWorkerRoute, func(w http.ResponseWriter, r *http.Request) {
		servePDFJS(w, r, findPDFJS(pdfjs).worker)
	})
	v.srv = &http.Server{Handler: mux}
	go v.srv.Serve(l)
	if urlFile != "" {
		if err := overwrite(urlFile, []byte(v.URL)); err != nil {
			log.Warn("file viewer: cannot write its address", "file", urlFile, "error", err)
		}
	}
	return v, nil
}

// overwrite replaces a small file's content in place. Truncating it to
// zero first, as os.WriteFile does, makes ext4 flush it on close (its
// auto_da_alloc safeguard): a fifth of a millisecond of start-up.
func overwrite(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// withToken serves h only under the viewer's token; anything else is not
// found, as if there were no such page.
func (v *FileViewer) withToken(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.PathValue("token")), []byte(v.token)) != 1 {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}
}

// Close stops the viewer.
func (v *FileViewer) Close() error { return v.srv.Shutdown(context.Background()) }

func htmlError(w http.ResponseWriter, status int, title, path string, detail ...string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<h1>%s</h1><p>%s</p>", html.EscapeString(title), html.EscapeString(path))
	for _, d := range detail {
		fmt.Fprintf(w, "<p>%s</p>", html.EscapeString(d))
	}
}

// viewFile answers GET /view?path=/abs/file with a page showing the file;
// PDFs are drawn by the pdf.js in pdfjs, or the CDN's when it has none.
func (v *FileViewer) viewFile(w http.ResponseWriter, r *http.Request, pdfjs string) {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		htmlError(w, http.StatusForbidden, "Access Denied", "This endpoint is only accessible from localhost")
		return
	}
	path := r.URL.Query().Get("path")
	if !filepath.IsAbs(path) {
		htmlError(w, http.StatusBadRequest, "Error: Path must be absolute", path)
		return
	}
	var data []byte
	var fi os.FileInfo
	err := v.as.Do(func() error {
		var err error
		if fi, err = os.Stat(path); err != nil || fi.IsDir() || !viewerExts[strings.ToLower(filepath.Ext(path))] {
			return err
		}
		data, err = readViewed(path)
		return err
	})
	switch {
	case errors.Is(err, os.ErrNotExist):
		htmlError(w, http.StatusNotFound, "Error: File not found", path)
		return
	case fi != nil && fi.IsDir():
		htmlError(w, http.StatusBadRequest, "Error: Path is a directory", path)
		return
	case err != nil:
		htmlError(w, http.StatusInternalServerError, "Error viewing file", path, err.Error())
		return
	}
	lib, worker := findPDFJS(pdfjs).urls()
	page, err := viewerPage(path, data, lib, worker)
	if err != nil {
		htmlError(w, http.StatusInternalServerError, "Error viewing file", path, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(page))
}

// readViewed reads a regular file of at most maxViewedFile bytes, without
// waiting on a FIFO.
func readViewed(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	case fi.Size() > maxViewedFile:
		return nil, fmt.Errorf("file too large to view (%d bytes, at most %d)", fi.Size(), maxViewedFile)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxViewedFile+1))
	if err == nil && len(data) > maxViewedFile {
		err = fmt.Errorf("file too large to view (more than %d bytes)", maxViewedFile)
	}
	return data, err
}

// viewerPage renders the file at path, whose content is data, into a page
// titled "File Viewer - <name>": images inline, PDFs drawn page by page on
// canvases by pdf.js, which the page loads from lib and its worker from
// worker.
func viewerPage(path string, data []byte, lib, worker string) (string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if !viewerExts[ext] {
		return "", fmt.Errorf("Unsupported file extension: %s. Supported extensions are: .pdf, .png, .jpg, .jpeg, .gif", ext)
	}
	b64 := base64.StdEncoding.EncodeToString(data)
	name := html.EscapeString(filepath.Base(path))
	var body string
	if ext == ".pdf" {
		// The worker is loaded into the page too, so that pdf.js parses in
		// the page itself, without waiting for a worker thread: the
		// canvases are then there when the page has loaded, as the
		// observation after a goto expects. workerSrc is used only if the
		// worker script did not load.
		body = `<div id="viewer"></div>
<script src="` + html.EscapeString(lib) + `"></script>
<script src="` + html.EscapeString(worker) + `"></script>
<script>
(async () => {
  const viewer = document.getElementById("viewer");
  try {
    pdfjsLib.GlobalWorkerOptions.workerSrc = "` + worker + `";
    const bytes = Uint8Array.from(atob("` + b64 + `"), c => c.charCodeAt(0));
    const pdf = await pdfjsLib.getDocument({data: bytes}).promise;
    const pages = [];
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const viewport = page.getViewport({scale: 1.5});
      const canvas = document.createElement("canvas");
      canvas.width = viewport.width;
      canvas.height = viewport.height;
      viewer.appendChild(canvas);
      pages.push({page, viewport, canvas});
    }
    for (const {page, viewport, canvas} of pages) {
      await page.render({canvasContext: canvas.getContext("2d"), viewport}).promise;
    }
  } catch (e) {
    viewer.innerHTML = "<h2>Error loading file</h2><p></p>";
    viewer.querySelector("p").textContent = String(e && e.message || e);
  }
})();
</script>`
	} else {
		mt := mime.TypeByExtension(ext)
		if mt == "" {
			mt = "application/octet-stream"
		}
		body = `<img src="data:` + mt + `;base64,` + b64 + `" alt="` + name + `">`
	}
	return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>File Viewer - ` + name + `</title>
<style>body{margin:0;font-family:sans-serif} img,canvas{display:block;max-width:100%;margin:10px auto}</style>
</head>
<body>
` + body + `
</body>
</html>
`, nil
}
