package server

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/executor"
)

// The byte-level file routes: a file's bytes read and written as the body,
// streamed both ways, and the operations on entries. Errors carry a
// machine-readable code beside the detail (api.ErrorBody).

func (s *Server) fsRoutes(r *gin.Engine) {
	r.GET("/files/content", s.readFile)
	r.HEAD("/files/content", s.readFile)
	r.PUT("/files/content", s.writeFile)
	r.GET("/files/stat", s.statFile)
	r.GET("/files/list", s.listDir)
	r.POST("/files/mkdir", entryOp(s, func(e *executor.Executor, req api.MkdirRequest) error {
		return e.Mkdir(req.Path, req.Mode, req.Parents)
	}))
	r.POST("/files/move", entryOp(s, func(e *executor.Executor, req api.MoveRequest) error {
		return e.MoveFile(req.From, req.To, req.Overwrite)
	}))
	r.POST("/files/remove", entryOp(s, func(e *executor.Executor, req api.RemoveRequest) error {
		return e.RemoveFile(req.Path, req.Recursive)
	}))
	r.POST("/files/chmod", entryOp(s, func(e *executor.Executor, req api.ChmodRequest) error {
		return e.Chmod(req.Path, req.Mode)
	}))
}

// badRequest answers a malformed request with the coded envelope.
func badRequest(c *gin.Context, format string, args ...any) {
	detail(c, http.StatusBadRequest, api.CodeInvalid, fmt.Sprintf(format, args...))
}

// pathQuery returns the required "path" query parameter.
func pathQuery(c *gin.Context) (string, bool) {
	p, ok := c.GetQuery("path")
	if !ok || p == "" {
		badRequest(c, "path: a query parameter is required")
		return "", false
	}
	return p, true
}

// boolQuery reads an optional boolean query parameter.
func boolQuery(c *gin.Context, name string, def bool) (bool, bool) {
	v, ok := c.GetQuery(name)
	if !ok {
		return def, true
	}
	b, ok := parseBool(v)
	if !ok {
		badRequest(c, "%s: %q is not a boolean", name, v)
	}
	return b, ok
}

// readFile answers GET /files/content?path=P[&gzip=true]: the file's
// bytes, with Range (206, 416), Last-Modified and an ETag for If-Range.
func (s *Server) readFile(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	p, ok := pathQuery(c)
	if !ok {
		return
	}
	gz, ok := boolQuery(c, api.QueryGzip, false)
	if !ok {
		return
	}
	if gz && c.GetHeader("Range") != "" {
		badRequest(c, "a gzip-compressed read cannot take a Range")
		return
	}
	f, info, err := e.OpenFile(p)
	if err != nil {
		fail(c, err)
		return
	}
	defer f.Close()
	h := c.Writer.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set(api.HeaderFileMode, fileMode(info.Mode))
	h.Set("ETag", fmt.Sprintf(`"%x-%x"`, info.Size, info.Modified.UnixNano()))
	if gz {
		h.Set("Content-Encoding", "gzip")
		h.Set("Last-Modified", info.Modified.UTC().Format(http.TimeFormat))
		c.Status(http.StatusOK)
		zw, _ := gzip.NewWriterLevel(c.Writer, gzip.BestSpeed)
		_, err := io.Copy(zw, f)
		if err == nil {
			err = zw.Close()
		}
		if err != nil {
			if c.Request.Context().Err() == nil {
				s.log.Warn("file read failed midway", "path", p, "error", err)
			}
			panic(http.ErrAbortHandler) // the status is sent; only a cut tells
		}
		return
	}
	if start, ok := openRangeStart(c.GetHeader("Range")); ok && start >= info.Size && c.GetHeader("If-Range") == "" {
		// The common unsatisfiable range, a resume past the end, gets
		// the coded envelope; ServeContent would answer in plain text.
		h.Set("Content-Range", fmt.Sprintf("bytes */%d", info.Size))
		h.Del(api.HeaderFileMode)
		c.AbortWithStatusJSON(http.StatusRequestedRangeNotSatisfiable, api.ErrorBody{
			Detail: fmt.Sprintf("%s has %d bytes; the range starts at %d", p, info.Size, start), Code: api.CodeRangeUnsatisfied})
		return
	}
	http.ServeContent(sendfileWriter{c.Writer}, c.Request, "", info.Modified, f)
}

// openRangeStart reads a Range of the form "bytes=N-" (from N to the end).
func openRangeStart(h string) (int64, bool) {
	v, ok := strings.CutPrefix(h, "bytes=")
	if !ok || !strings.HasSuffix(v, "-") || strings.Contains(v, ",") {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(v, "-"), 10, 64)
	return n, err == nil && n >= 0
}

// sendfileWriter lets http.ServeContent hand a file to the connection
// (sendfile), which gin's writer hides; headers still go through gin's.
type sendfileWriter struct{ gin.ResponseWriter }

func (w sendfileWriter) ReadFrom(r io.Reader) (int64, error) {
	w.WriteHeaderNow()
	if u, ok := w.ResponseWriter.(interface{ Unwrap() http.ResponseWriter }); ok {
		if rf, ok := u.Unwrap().(io.ReaderFrom); ok {
			return rf.ReadFrom(r)
		}
	}
	return io.Copy(struct{ io.Writer }{w.ResponseWriter}, r)
}

// writeFile answers PUT /files/content?path=P[&mode=644][&parents=true]
// [&offset=N]: the body becomes the file's bytes. Without offset the file
// is replaced whole and atomically; with it, the existing file is cut to N
// bytes and the body appended (a resumed upload). A gzip
// Content-Encoding is decompressed on the way.
func (s *Server) writeFile(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	p, ok := pathQuery(c)
	if !ok {
		return
	}
	parents, ok := boolQuery(c, "parents", true)
	if !ok {
		return
	}
	w := executor.FileWrite{Mode: c.Query("mode"), Parents: parents, Size: c.Request.ContentLength}
	if v, ok := c.GetQuery("offset"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			badRequest(c, "offset: a non-negative integer is required")
			return
		}
		w.Offset = &n
	}
	var body io.Reader = c.Request.Body
	switch enc := strings.ToLower(c.GetHeader("Content-Encoding")); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			badRequest(c, "body: not gzip: %v", err)
			return
		}
		defer zr.Close()
		body, w.Size = zr, -1
	default:
		badRequest(c, "Content-Encoding %q is not supported (gzip is)", enc)
		return
	}
	start := time.Now()
	out, err := e.WriteFile(c.Request.Context(), p, body, w)
	if err != nil {
		if c.Request.Context().Err() != nil {
			c.Abort()
			return
		}
		if executor.KindOf(err) == executor.KindInternal {
			s.log.Warn("file write failed", "path", p, "error", err)
		}
		fail(c, err)
		return
	}
	s.log.Debug("file written", "path", p, "bytes", out.Bytes, "duration", time.Since(start))
	c.JSON(http.StatusOK, fileWritten(p, out))
}

func (s *Server) statFile(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	p, ok := pathQuery(c)
	if !ok {
		return
	}
	info, err := e.StatFile(p)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, fileInfo(info))
}

// listDir answers GET /files/list[?path=P]: the workspace without a path.
func (s *Server) listDir(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	p := c.DefaultQuery("path", ".")
	entries, err := e.ListDir(p)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, fileList(p, entries))
}

// entryOp is the handler of a route that decodes a request of type R,
// hands it to do and answers {"ok": true} or the coded error.
func entryOp[R any](s *Server, do func(e *executor.Executor, req R) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		e := s.executor(c)
		if e == nil {
			return
		}
		var req R
		if !s.bindJSON(c, &req, false) {
			return
		}
		okOrFail(c, do(e, req))
	}
}

// okOrFail answers {"ok": true} or the coded error.
func okOrFail(c *gin.Context, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, api.OK{OK: true})
}
