package client

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/event"
)

// Read returns the text of a file in the sandbox (a "read" action with the
// default implementation). A failure the agent would have been shown (a
// missing file, a binary one) is an *ObservationError.
func (c *Client) Read(ctx context.Context, path string) (string, error) {
	obs, err := c.Execute(ctx, event.NewFileRead(path))
	if err != nil {
		return "", err
	}
	r, ok := obs.(*event.FileReadResult)
	if !ok {
		return "", &ObservationError{Observation: obs}
	}
	return r.Content, nil
}

// Write replaces a file in the sandbox with content (a "write" action;
// the server ends the content with a newline).
func (c *Client) Write(ctx context.Context, path, content string) error {
	obs, err := c.Execute(ctx, event.NewFileWrite(path, content))
	if err != nil {
		return err
	}
	if _, ok := obs.(*event.FileWriteResult); !ok {
		return &ObservationError{Observation: obs}
	}
	return nil
}

// Edit runs a command of the file editor; build the action with
// event.NewFileEdit. Editor errors are part of the result's content
// ("ERROR:\n..."), as agents see them.
func (c *Client) Edit(ctx context.Context, a *event.FileEdit) (*event.FileEditResult, error) {
	obs, err := c.Execute(ctx, a)
	if err != nil {
		return nil, err
	}
	r, ok := obs.(*event.FileEditResult)
	if !ok {
		return nil, &ObservationError{Observation: obs}
	}
	return r, nil
}

// Upload copies a local file, or with recursive a local directory, into
// the sandbox directory dest, as the OpenHands host's copy_to does: a file
// keeps its base name; a directory is sent as a zip whose names start with
// the directory's own name, so it lands at dest/<name>/. The content is
// streamed, never held in memory. progress, if not nil, is called with the
// bytes sent so far.
func (c *Client) Upload(ctx context.Context, src, dest string, recursive bool, progress func(int64)) error {
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	if !recursive {
		if fi.IsDir() {
			return fmt.Errorf("upload %s: is a directory (upload it recursively)", src)
		}
		f, err := os.Open(src)
		if err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		defer f.Close()
		return c.upload(ctx, filepath.Base(src), countingReader{f, progress, new(int64)}, fi.Size(), dest, false)
	}
	if !fi.IsDir() {
		return fmt.Errorf("upload %s: not a directory", src)
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(zipDir(ctx, pw, src, progress))
	}()
	defer pr.Close()
	return c.UploadReader(ctx, filepath.Base(src)+".zip", pr, dest, true)
}

// UploadReader sends r as the file name into the sandbox directory dest;
// with recursive (or a name ending in ".zip") the server unpacks it as a
// zip archive.
func (c *Client) UploadReader(ctx context.Context, name string, r io.Reader, dest string, recursive bool) error {
	return c.upload(ctx, name, r, -1, dest, recursive)
}

// upload sends one multipart upload. With size known (>= 0) the body is the
// part's header, r and the closing boundary in sequence, with a
// Content-Length; otherwise it is written through a pipe, chunked.
func (c *Client) upload(ctx context.Context, name string, r io.Reader, size int64, dest string, recursive bool) error {
	var head, tail bytes.Buffer
	mw := multipart.NewWriter(&head)
	if _, err := mw.CreateFormFile("file", name); err != nil {
		return fmt.Errorf("upload %s: %w", name, err)
	}
	contentType := mw.FormDataContentType()
	var body io.Reader
	length := int64(-1)
	if size >= 0 {
		prefix := bytes.Clone(head.Bytes())
		head.Reset()
		if err := mw.Close(); err != nil {
			return fmt.Errorf("upload %s: %w", name, err)
		}
		tail.Write(head.Bytes())
		body = io.MultiReader(bytes.NewReader(prefix), io.LimitReader(r, size), &tail)
		length = int64(len(prefix)) + size + int64(tail.Len())
	} else {
		pr, pw := io.Pipe()
		go func() {
			_, err := pw.Write(head.Bytes())
			if err == nil {
				_, err = io.Copy(pw, r)
			}
			if err == nil {
				head.Reset()
				if err = mw.Close(); err == nil {
					_, err = pw.Write(head.Bytes())
				}
			}
			pw.CloseWithError(err)
		}()
		defer pr.Close()
		body = pr
	}
	q := url.Values{"destination": {dest}, "recursive": {strconv.FormatBool(recursive)}}
	req, err := c.newRequest(ctx, http.MethodPost, "/upload_file?"+q.Encode(), body)
	if err != nil {
		return err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", contentType)
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("upload %s: %w", name, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return responseError(resp.StatusCode, data)
	}
	return nil
}

// zipDir writes dir as a zip with names relative to dir's parent, the
// layout the host's copy_to sends. Files are stored uncompressed: the
// link is local and compression would bound the transfer by one core.
func zipDir(ctx context.Context, w io.Writer, dir string, progress func(int64)) error {
	zw := zip.NewWriter(w)
	parent := filepath.Dir(filepath.Clean(dir))
	sent := new(int64)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(parent, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := zip.FileInfoHeader(info)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			hdr.Name += "/"
			_, err = zw.CreateHeader(hdr)
			return err
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			zf, err := zw.CreateHeader(hdr)
			if err != nil {
				return err
			}
			_, err = io.WriteString(zf, target)
			return err
		case !info.Mode().IsRegular():
			return nil // sockets, FIFOs, devices
		}
		hdr.Method = zip.Store
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		zf, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		_, err = io.Copy(zf, countingReader{f, progress, sent})
		return err
	})
	if err != nil {
		return fmt.Errorf("zip %s: %w", dir, err)
	}
	return zw.Close()
}

// countingReader reports the running total of bytes read to a callback.
type countingReader struct {
	r     io.Reader
	fn    func(int64)
	total *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 && c.fn != nil {
		*c.total += int64(n)
		c.fn(*c.total)
	}
	return n, err
}

// Download writes a zip of everything under path in the sandbox to w, as
// the host's copy_from receives it, and returns the bytes written. A path
// that is a regular file gives an empty archive (upstream's behaviour).
// progress, if not nil, is called with the bytes received so far.
func (c *Client) Download(ctx context.Context, path string, w io.Writer, progress func(int64)) (int64, error) {
	req, err := c.newRequest(ctx, http.MethodGet, "/download_files?"+url.Values{"path": {path}}.Encode(), nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("download %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return 0, responseError(resp.StatusCode, body)
	}
	n, err := io.Copy(w, countingReader{resp.Body, progress, new(int64)})
	if err != nil {
		return n, fmt.Errorf("download %s: %w", path, err)
	}
	return n, nil
}

// ListFiles lists a sandbox directory as the UI's file tree does:
// directories first with a trailing "/", then files. An empty path lists
// the workspace; a relative one is taken from it.
func (c *Client) ListFiles(ctx context.Context, path string) ([]string, error) {
	body := []byte("{}")
	if path != "" {
		body, _ = json.Marshal(map[string]string{"path": path})
	}
	var names []string
	if err := c.do(ctx, http.MethodPost, "/list_files", body, &names); err != nil {
		return nil, err
	}
	return names, nil
}

// WatchEvent is one file-system change reported by Watch.
type WatchEvent struct {
	api.WatchEvent
	// Err is set on the last event when the stream broke before ctx ended.
	Err error
}

// Watch follows changes under a sandbox directory (and every directory
// below it, if recursive). When it returns, the server's watch is in
// place. The channel closes when ctx ends, which also releases the watch
// on the server; if the connection breaks first, a last event carries Err.
func (c *Client) Watch(ctx context.Context, path string, recursive bool) (<-chan WatchEvent, error) {
	q := url.Values{"path": {path}, "recursive": {strconv.FormatBool(recursive)}}
	req, err := c.newRequest(ctx, http.MethodGet, "/watch?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, responseError(resp.StatusCode, body)
	}
	out := make(chan WatchEvent, 64)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		err := readSSE(resp.Body, func(sse sseEvent) (bool, error) {
			var ev api.WatchEvent
			if err := json.Unmarshal(sse.Data, &ev); err != nil {
				return false, fmt.Errorf("decode watch event: %w", err)
			}
			select {
			case out <- WatchEvent{WatchEvent: ev}:
				return true, nil
			case <-ctx.Done():
				return false, nil
			}
		})
		if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			select {
			case out <- WatchEvent{Err: err}:
			case <-ctx.Done():
			}
		}
	}()
	return out, nil
}
