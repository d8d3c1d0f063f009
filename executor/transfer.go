package executor

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/files"
	"github.com/actionserver/actionserver/internal/asuser"
)

// Errors of the transfers and watches.
var (
	// ErrBadTransfer: a transfer request the executor refuses.
	ErrBadTransfer = sentinel(KindInvalid, errors.New("invalid transfer request"))
	// ErrZipTooLarge: an uploaded archive would unpack to more than the
	// server allows (a zip bomb).
	ErrZipTooLarge = sentinel(KindTooLarge, files.ErrZipTooLarge)
	// ErrFileNotFound: what a download names does not exist.
	ErrFileNotFound = sentinel(KindNotFound, errors.New("File not found"))
	// ErrTooManyWatchers: the cap on concurrent watches is reached.
	ErrTooManyWatchers = sentinel(KindLimit, files.ErrTooManyWatchers)
	// ErrWatchNotFound: the directory to watch does not exist.
	ErrWatchNotFound = sentinel(KindNotFound, errors.New("no such directory"))
	// ErrCannotWatch: the path cannot be watched (not a directory, not
	// readable, no inotify instance left).
	ErrCannotWatch = sentinel(KindInvalid, errors.New("cannot watch this path"))
)

// Upload stores one uploaded file in the directory dest, creating it if
// needed. A zip archive (recursive, or a name ending in ".zip") is unpacked
// into dest and not kept; anything else is written to dest/name. What the
// upload creates belongs to the sandbox user. body is streamed, never held
// in memory.
func (e *Executor) Upload(ctx context.Context, name string, body io.Reader, dest string, recursive bool) error {
	if !filepath.IsAbs(dest) {
		return ErrBadTransfer.withText("Destination must be an absolute path")
	}
	isZip := strings.HasSuffix(name, ".zip")
	if recursive && !isZip {
		return ErrBadTransfer.withText("Recursive uploads must be zip files")
	}
	if err := checkPath(dest); err != nil {
		return err
	}
	owner := e.fileOwner()
	err := e.fsUser.Do(func() error {
		if err := files.MkdirAll(dest, owner); err != nil {
			return err
		}
		if isZip {
			return files.ReceiveZip(ctx, dest, body, owner)
		}
		_, err := files.ReceiveFile(ctx, dest, name, body, owner)
		return err
	})
	switch {
	case errors.Is(err, files.ErrNotPlainName), errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.EINVAL) && strings.ContainsRune(name, 0):
		return ErrBadTransfer.withText("Invalid file name: %q", name)
	case errors.Is(err, files.ErrZipTooLarge):
		return ErrZipTooLarge.with(err)
	}
	return err
}

// checkPath refuses a path no file can have: one with a NUL byte, or a
// component longer than the kernel allows.
func checkPath(p string) error {
	if strings.ContainsRune(p, 0) {
		return ErrBadPath.withText("Invalid path: %q contains a NUL byte", p)
	}
	for _, c := range strings.Split(p, "/") {
		if len(c) > maxNameLen {
			return ErrBadPath.withText("Invalid path: a component of %q is longer than %d bytes", p, maxNameLen)
		}
	}
	if len(p) >= maxPathLen {
		return ErrBadPath.withText("Invalid path: %q is longer than %d bytes", p, maxPathLen-1)
	}
	return nil
}

// The kernel's NAME_MAX and PATH_MAX.
const (
	maxNameLen = 255
	maxPathLen = 4096
)

// Download is a directory (or file) ready to be sent as a zip.
type Download struct {
	root string
	as   *asuser.User
	// Name is the archive's file name: the base name of the path plus
	// ".zip".
	Name string
}

// PrepareDownload checks a download_files request before anything is sent:
// path must be absolute and exist, for the sandbox user.
func (e *Executor) PrepareDownload(path string) (*Download, error) {
	if !filepath.IsAbs(path) {
		return nil, ErrBadTransfer.withText("Path must be an absolute path")
	}
	// Like upstream's os.path.exists, any failure to stat (a NUL byte, a
	// name too long, a directory the user cannot search) is "not found".
	if checkPath(path) != nil {
		return nil, ErrFileNotFound
	}
	err := e.fsUser.Do(func() error {
		_, err := os.Stat(path)
		return err
	})
	if err != nil {
		return nil, ErrFileNotFound
	}
	return &Download{root: path, Name: filepath.Base(path) + ".zip", as: e.fsUser}, nil
}

// WriteTo streams the zip of every regular file under the download's path
// to w, with names relative to it, reading with the sandbox user's rights;
// a regular file gives an empty archive, as upstream's does.
func (d *Download) WriteTo(ctx context.Context, w io.Writer) error {
	return d.as.Do(func() error { return files.WriteZip(ctx, w, d.root) })
}

// ListFiles lists a directory for the UI's file tree, as the sandbox user
// sees it. A nil or relative path is taken from the workspace (not the
// shell's directory); anything that is not a directory the user can read
// lists as empty.
func (e *Executor) ListFiles(path *string) []string {
	dir := e.opts.WorkDir
	if path != nil {
		dir = *path
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(e.opts.WorkDir, dir)
		}
	}
	var names []string
	_ = e.fsUser.Do(func() error { names = files.List(dir); return nil })
	if names == nil {
		return []string{}
	}
	return names
}

// WatchOp is what a WatchEvent reports happened. Front ends map it to
// their wire names.
type WatchOp int

// The operations of a watch.
const (
	WatchCreate WatchOp = iota + 1
	WatchWrite
	WatchRemove
	WatchRename
	WatchChmod
	// WatchLimit: the directory at Path and what is below it are not
	// watched, because the watch reached the cap on watched directories;
	// sent at most once per watch.
	WatchLimit
)

// WatchEvent is one file-system change under a watched directory.
type WatchEvent struct {
	Path  string
	Op    WatchOp
	IsDir bool
	Time  time.Time
}

// Watch streams file-system changes under dir until ctx ends; the number
// of concurrent watches is capped (ErrTooManyWatchers). The channel is
// closed after ctx ends.
func (e *Executor) Watch(ctx context.Context, dir string, recursive bool) (<-chan WatchEvent, error) {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(e.opts.WorkDir, dir)
	}
	events, err := e.watchers.Watch(ctx, dir, recursive)
	switch {
	case errors.Is(err, files.ErrTooManyWatchers):
		return nil, ErrTooManyWatchers.with(err)
	case errors.Is(err, fs.ErrNotExist):
		return nil, ErrWatchNotFound.with(err)
	case err != nil:
		return nil, ErrCannotWatch.with(err)
	}
	out := make(chan WatchEvent, cap(events))
	go func() {
		defer close(out)
		for ev := range events {
			select {
			case out <- WatchEvent{Path: ev.Path, Op: watchOp(ev.Op), IsDir: ev.IsDir, Time: ev.Time}:
			case <-ctx.Done():
				// The watch ends with ctx and closes events; nobody reads
				// out any more, so what is left is dropped.
			}
		}
	}()
	return out, nil
}

// watchOp is a watcher's operation as the executor reports it, so a
// rename inside the watcher cannot change what clients receive.
func watchOp(op string) WatchOp {
	switch op {
	case files.OpCreate:
		return WatchCreate
	case files.OpWrite:
		return WatchWrite
	case files.OpRemove:
		return WatchRemove
	case files.OpRename:
		return WatchRename
	case files.OpChmod:
		return WatchChmod
	case files.OpLimit:
		return WatchLimit
	}
	return 0
}
