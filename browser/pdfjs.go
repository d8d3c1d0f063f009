package browser

import (
	"net/http"
	"os"
	"path/filepath"
)

// pdfjsDir is where Debian's libjs-pdf installs pdf.js. Where it is
// installed, the file viewer serves pdf.js itself, so PDFs show in
// sandboxes without internet; elsewhere its pages load pdf.js from the CDN
// that upstream's use.
const pdfjsDir = "/usr/share/javascript/pdf/build"

// The CDN's pdf.js, which upstream's viewer uses.
const (
	pdfjsCDNLib    = "https://cdnjs.cloudflare.com/ajax/libs/pdf.js/3.11.174/pdf.min.js"
	pdfjsCDNWorker = "https://cdnjs.cloudflare.com/ajax/libs/pdf.js/3.11.174/pdf.worker.min.js"
)

// Where the file viewer serves a local pdf.js. Debian's (2.x) and the
// CDN's (3.x) alike define the pdfjsLib global (getDocument,
// GlobalWorkerOptions.workerSrc) and, in the worker script, the
// pdfjsWorker global, which is all the viewer page relies on.
const (
	pdfjsLibRoute    = "/pdfjs/pdf.js"
	pdfjsWorkerRoute = "/pdfjs/pdf.worker.js"
)

// pdfjsFiles are the paths of a local pdf.js and its worker, both empty
// when there is none.
type pdfjsFiles struct{ lib, worker string }

// findPDFJS looks for pdf.js and its worker in dir, minified or not.
func findPDFJS(dir string) pdfjsFiles {
	first := func(names ...string) string {
		for _, n := range names {
			p := filepath.Join(dir, n)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p
			}
		}
		return ""
	}
	f := pdfjsFiles{lib: first("pdf.min.js", "pdf.js"), worker: first("pdf.worker.min.js", "pdf.worker.js")}
	if f.lib == "" || f.worker == "" {
		return pdfjsFiles{}
	}
	return f
}

// urls returns the URLs a viewer page loads pdf.js and its worker from:
// the viewer's own routes when the files are there, else the CDN's.
func (f pdfjsFiles) urls() (lib, worker string) {
	if f.lib == "" {
		return pdfjsCDNLib, pdfjsCDNWorker
	}
	return pdfjsLibRoute, pdfjsWorkerRoute
}

// servePDFJS answers with the script at path, or 404 when there is none.
func servePDFJS(w http.ResponseWriter, r *http.Request, path string) {
	if path == "" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	http.ServeFile(w, r, path)
}
