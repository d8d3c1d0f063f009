package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
)

// uploadField is the multipart field that carries an upload, as the host
// sends it.
const uploadField = "file"

// parseBool reads a boolean query parameter the way upstream's framework
// does; ok is false for anything else.
func parseBool(v string) (b, ok bool) {
	switch v {
	case "true", "True", "TRUE", "1", "on", "On", "yes", "Yes", "y":
		return true, true
	case "false", "False", "FALSE", "0", "off", "Off", "no", "No", "n":
		return false, true
	}
	return false, false
}

// multipartReader reads r's multipart body through a large buffer: the
// multipart parser reads 4 KB at a time, which straight from the
// connection would cost a system call each.
func multipartReader(r *http.Request) (*multipart.Reader, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	if mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, fmt.Errorf("content type %q is not multipart/form-data with a boundary", mt)
	}
	return multipart.NewReader(bufio.NewReaderSize(r.Body, uploadReadBuffer), params["boundary"]), nil
}

// uploadReadBuffer is the read buffer of an upload's body.
const uploadReadBuffer = 256 << 10

// uploadFile stores one multipart file in the sandbox. The body is read
// part by part and streamed to disk, so its size does not affect memory.
func (s *Server) uploadFile(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	dest := c.DefaultQuery("destination", "/")
	recursive := false
	if v, ok := c.GetQuery("recursive"); ok {
		if recursive, ok = parseBool(v); !ok {
			invalidRequest(c, fmt.Errorf("recursive: %q is not a boolean", v))
			return
		}
	}
	mr, err := multipartReader(c.Request)
	if err != nil {
		invalidRequest(c, fmt.Errorf("body: %w", err))
		return
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			invalidRequest(c, fmt.Errorf("field %q: a file is required", uploadField))
			return
		}
		if err != nil {
			invalidRequest(c, fmt.Errorf("body: %w", err))
			return
		}
		if part.FormName() != uploadField || part.FileName() == "" {
			part.Close()
			continue
		}
		name := part.FileName()
		err = e.Upload(c.Request.Context(), name, part, dest, recursive)
		part.Close()
		if err != nil {
			if c.Request.Context().Err() != nil {
				c.Abort()
				return
			}
			s.log.Warn("upload failed", "destination", dest, "file", name, "error", err)
			// Upstream reports every failure, its own 400s included, as a
			// 500 whose detail is the error's text.
			failAsUpstream(c, err)
			return
		}
		// A struct, not a map: upstream's keys come in this order, and a
		// map would be sorted.
		c.JSON(http.StatusOK, struct {
			Filename    string `json:"filename"`
			Destination string `json:"destination"`
			Recursive   bool   `json:"recursive"`
		}{name, dest, recursive})
		return
	}
}

// downloadFiles streams a zip of a directory straight into the response.
func (s *Server) downloadFiles(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	path, ok := c.GetQuery("path")
	if !ok {
		invalidRequest(c, errors.New("path: a query parameter is required"))
		return
	}
	d, err := e.PrepareDownload(path)
	if err != nil {
		detail(c, http.StatusInternalServerError, api.CodeInternal, upstreamText(err))
		return
	}
	h := c.Writer.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": d.Name}))
	c.Status(http.StatusOK)
	if err := d.WriteTo(c.Request.Context(), c.Writer); err != nil {
		if c.Request.Context().Err() == nil {
			s.log.Warn("download failed midway", "path", path, "error", err)
		}
		// The status is sent; only cutting the connection tells the
		// client the archive is incomplete.
		panic(http.ErrAbortHandler)
	}
}

// listFiles lists a directory for the UI. Everything but a body that is not
// a JSON object answers 200 with a (possibly empty) list.
func (s *Server) listFiles(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	body, ok := s.readBody(c)
	if !ok {
		return
	}
	var req struct {
		Path *string `json:"path"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		// Upstream fails here with its generic 500; the host always
		// sends an object, so the client's mistake is said as one.
		detail(c, http.StatusBadRequest, api.CodeInvalid, `the body must be a JSON object with an optional string "path": `+describeJSON(err))
		return
	}
	c.JSON(http.StatusOK, e.ListFiles(req.Path))
}

// watch streams file-system events under a directory as Server-Sent Events:
// one JSON api.WatchEvent per "data:" line, a comment line every 15 s
// while nothing happens. Once the response has started the watch is in
// place; it is released as soon as the client goes away.
func (s *Server) watch(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	dir := c.Query("path")
	if dir == "" {
		detail(c, http.StatusBadRequest, api.CodeInvalid, "path is required")
		return
	}
	recursive := false
	if v, ok := c.GetQuery("recursive"); ok {
		if recursive, ok = parseBool(v); !ok {
			detail(c, http.StatusBadRequest, api.CodeInvalid, "recursive must be true or false")
			return
		}
	}
	events, err := e.Watch(c.Request.Context(), dir, recursive)
	if err != nil {
		fail(c, err)
		return
	}
	w := startSSE(c)
	keepAlive := time.NewTicker(sseKeepAlive)
	defer keepAlive.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			b, err := json.Marshal(watchEvent(ev))
			if err != nil {
				return
			}
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
			// Bursts arrive together; one flush per burst.
			if len(events) == 0 {
				w.Flush()
			}
		case <-keepAlive.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			w.Flush()
		}
	}
}
