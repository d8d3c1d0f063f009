package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/actionserver/actionserver/api"
)

// The byte-level file routes (/files/...). Paths are absolute, or relative
// to the workspace and confined to it.

// FileReader is the body of a file read; close it.
type FileReader struct {
	io.ReadCloser
	// Offset is where the body starts in the file; Size is the file's
	// whole size (-1 when compressed and not known).
	Offset, Size int64
	// Mode is the file's mode, in octal.
	Mode string
	// ETag identifies this version of the file (for resuming).
	ETag string
}

// OpenFile starts reading the file at path from offset; the body streams.
func (c *Client) OpenFile(ctx context.Context, path string, offset int64) (*FileReader, error) {
	req, err := c.newRequest(ctx, http.MethodGet, "/files/content?path="+url.QueryEscape(path), nil)
	if err != nil {
		return nil, err
	}
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	}
	// Ask for no compression: the transport would otherwise ask for gzip.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	fr := &FileReader{ReadCloser: resp.Body, Mode: resp.Header.Get(api.HeaderFileMode), ETag: resp.Header.Get("ETag"), Size: resp.ContentLength}
	switch resp.StatusCode {
	case http.StatusOK:
		if offset > 0 {
			resp.Body.Close()
			return nil, fmt.Errorf("read %s: the server ignored the range", path)
		}
	case http.StatusPartialContent:
		var start, end, total int64
		if _, err := fmt.Sscanf(resp.Header.Get("Content-Range"), "bytes %d-%d/%d", &start, &end, &total); err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("read %s: bad Content-Range %q", path, resp.Header.Get("Content-Range"))
		}
		fr.Offset, fr.Size = start, total
	case http.StatusRequestedRangeNotSatisfiable:
		resp.Body.Close()
		return nil, &Error{StatusCode: resp.StatusCode, Detail: "offset is past the end of the file", Code: api.CodeRangeUnsatisfied}
	default:
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, responseError(resp.StatusCode, data)
	}
	return fr, nil
}

// WriteFileOptions are the options of WriteFile.
type WriteFileOptions struct {
	// Mode of a new file in octal ("0600"); empty means 0644.
	Mode string
	// NoParents refuses to create missing parent directories.
	NoParents bool
	// Offset, when not nil, writes in place from there: the file is cut
	// to *Offset bytes and the body appended (a resumed upload).
	Offset *int64
	// Size is the body's length, sent as Content-Length; 0 means unknown
	// (unless the body is a *bytes.Reader, *bytes.Buffer or
	// *strings.Reader, whose length is known).
	Size int64
}

// WriteFile streams body into the file at path. Without Offset the file is
// replaced whole, atomically: a failure leaves the old file or none.
func (c *Client) WriteFile(ctx context.Context, path string, body io.Reader, opts WriteFileOptions) (*api.FileWritten, error) {
	q := url.Values{"path": {path}}
	if opts.Mode != "" {
		q.Set("mode", opts.Mode)
	}
	if opts.NoParents {
		q.Set("parents", "false")
	}
	if opts.Offset != nil {
		q.Set("offset", strconv.FormatInt(*opts.Offset, 10))
	}
	req, err := c.newRequest(ctx, http.MethodPut, "/files/content?"+q.Encode(), body)
	if err != nil {
		return nil, err
	}
	if opts.Size > 0 {
		req.ContentLength = opts.Size
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("write %s: read response: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, responseError(resp.StatusCode, data)
	}
	var out api.FileWritten
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("write %s: decode response: %w", path, err)
	}
	return &out, nil
}

// StatFile describes the entry at path (a symlink itself, with its target).
func (c *Client) StatFile(ctx context.Context, path string) (*api.FileInfo, error) {
	var info api.FileInfo
	if err := c.do(ctx, http.MethodGet, "/files/stat?path="+url.QueryEscape(path), nil, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// ListDir describes the entries of a directory, by name; "" lists the
// workspace.
func (c *Client) ListDir(ctx context.Context, path string) (*api.FileList, error) {
	route := "/files/list"
	if path != "" {
		route += "?path=" + url.QueryEscape(path)
	}
	var list api.FileList
	if err := c.do(ctx, http.MethodGet, route, nil, &list); err != nil {
		return nil, err
	}
	return &list, nil
}

// Mkdir creates a directory; with parents, as mkdir -p. mode may be "".
func (c *Client) Mkdir(ctx context.Context, path, mode string, parents bool) error {
	return c.postJSON(ctx, "/files/mkdir", api.MkdirRequest{Path: path, Mode: mode, Parents: parents}, nil)
}

// Move renames from to to; overwrite replaces an existing to.
func (c *Client) Move(ctx context.Context, from, to string, overwrite bool) error {
	return c.postJSON(ctx, "/files/move", api.MoveRequest{From: from, To: to, Overwrite: overwrite}, nil)
}

// Remove deletes an entry; a directory with its contents only when
// recursive.
func (c *Client) Remove(ctx context.Context, path string, recursive bool) error {
	return c.postJSON(ctx, "/files/remove", api.RemoveRequest{Path: path, Recursive: recursive}, nil)
}

// Chmod sets the mode of an entry, in octal ("755").
func (c *Client) Chmod(ctx context.Context, path, mode string) error {
	return c.postJSON(ctx, "/files/chmod", api.ChmodRequest{Path: path, Mode: mode}, nil)
}
