package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/actionserver/actionserver/files"
)

// RequestError is a transfer request the executor refuses. Its text is
// "<status>: <message>", the way upstream's server words these errors when
// it reports them inside a 500, which the host shows as is.
type RequestError struct {
	Status int
	Msg    string
}

func (e *RequestError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Msg) }

// Upload stores one uploaded file in the directory dest, creating it if
// needed. A zip archive (recursive, or a name ending in ".zip") is unpacked
// into dest and not kept; anything else is written to dest/name. What the
// upload creates belongs to the sandbox user. body is streamed, never held
// in memory.
func (e *Executor) Upload(ctx context.Context, name string, body io.Reader, dest string, recursive bool) error {
	if !filepath.IsAbs(dest) {
		return &RequestError{400, "Destination must be an absolute path"}
	}
	isZip := strings.HasSuffix(name, ".zip")
	if recursive && !isZip {
		return &RequestError{400, "Recursive uploads must be zip files"}
	}
	owner := e.fileOwner()
	if err := files.MkdirAll(dest, owner); err != nil {
		return err
	}
	if isZip {
		return files.ReceiveZip(ctx, dest, body, owner)
	}
	_, err := files.ReceiveFile(ctx, dest, name, body, owner)
	if errors.Is(err, files.ErrNotPlainName) {
		return &RequestError{400, fmt.Sprintf("Invalid file name: %q", name)}
	}
	return err
}

// Download is a directory (or file) ready to be sent as a zip.
type Download struct {
	root string
	// Name is the archive's file name: the base name of the path plus
	// ".zip".
	Name string
}

// PrepareDownload checks a download_files request before anything is sent:
// path must be absolute and exist.
func (e *Executor) PrepareDownload(path string) (*Download, error) {
	if !filepath.IsAbs(path) {
		return nil, &RequestError{400, "Path must be an absolute path"}
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &RequestError{404, "File not found"}
		}
		return nil, fmt.Errorf("download %s: %w", path, err)
	}
	return &Download{root: path, Name: filepath.Base(path) + ".zip"}, nil
}

// WriteTo streams the zip of every regular file under the download's path
// to w, with names relative to it; a regular file gives an empty archive,
// as upstream's does.
func (d *Download) WriteTo(ctx context.Context, w io.Writer) error {
	return files.WriteZip(ctx, w, d.root)
}

// ListFiles lists a directory for the UI's file tree. A nil or relative
// path is taken from the workspace (not the shell's directory); anything
// that is not a readable directory lists as empty.
func (e *Executor) ListFiles(path *string) []string {
	dir := e.opts.WorkDir
	if path != nil {
		dir = *path
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(e.opts.WorkDir, dir)
		}
	}
	return files.List(dir)
}

// Watch streams file-system changes under dir until ctx ends; the number
// of concurrent watches is capped (files.ErrTooManyWatchers).
func (e *Executor) Watch(ctx context.Context, dir string, recursive bool) (<-chan files.WatchEvent, error) {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(e.opts.WorkDir, dir)
	}
	return e.watchers.Watch(ctx, dir, recursive)
}
