package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/files"
)

// The byte-level file operations of the native API. Paths are absolute,
// or relative to the workspace and then confined to it (files.Tree says
// how); what they create belongs to the sandbox user, and they act with
// that user's filesystem rights (see package asuser).

// Errors of the byte-level file operations; each wraps the component's
// error, whose text says which path and what failed.
var (
	ErrBadPath        = sentinel(KindInvalid, files.ErrBadPath)
	ErrPathEscapes    = sentinel(KindInvalid, files.ErrEscapes)
	ErrPathNotFound   = sentinel(KindNotFound, fs.ErrNotExist)
	ErrPathExists     = sentinel(KindConflict, fs.ErrExist)
	ErrNotEmpty       = sentinel(KindConflict, errors.New("directory not empty; remove it recursively"))
	ErrNotRegularFile = sentinel(KindInvalid, files.ErrNotRegular)
	ErrIsDirectory    = sentinel(KindInvalid, errors.New("is a directory"))
	ErrNotDirectory   = sentinel(KindInvalid, errors.New("not a directory"))
	ErrCrossDevice    = sentinel(KindInvalid, errors.New("source and target are on different file systems"))
	ErrBadOffset      = sentinel(KindInvalid, files.ErrOffsetBeyondEnd)
	ErrShortBody      = sentinel(KindInvalid, files.ErrSizeMismatch)
	ErrBadMode        = sentinel(KindInvalid, errors.New("invalid mode"))
	ErrTreeRoot       = sentinel(KindInvalid, files.ErrIsRoot)
	ErrTooManyEntries = sentinel(KindLimit, files.ErrTooManyEntries)
	ErrNoSpace        = sentinel(KindNoSpace, syscall.ENOSPC)
	ErrPermission     = sentinel(KindPermission, fs.ErrPermission)
)

// fsError gives a file-system error its executor kind.
func fsError(err error) error {
	var s *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &s):
		return err
	case errors.Is(err, files.ErrBadPath):
		return ErrBadPath.with(err)
	case errors.Is(err, files.ErrEscapes):
		return ErrPathEscapes.with(err)
	case errors.Is(err, files.ErrIsRoot):
		return ErrTreeRoot.with(err)
	case errors.Is(err, files.ErrNotRegular):
		return ErrNotRegularFile.with(err)
	case errors.Is(err, files.ErrOffsetBeyondEnd):
		return ErrBadOffset.with(err)
	case errors.Is(err, files.ErrSizeMismatch):
		return ErrShortBody.with(err)
	case errors.Is(err, files.ErrTooManyEntries):
		return ErrTooManyEntries.with(err)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return ErrNoSpace.with(err)
	case errors.Is(err, fs.ErrNotExist):
		return ErrPathNotFound.with(err)
	case errors.Is(err, syscall.ENOTEMPTY):
		// Before ErrExist, which ENOTEMPTY also matches.
		return ErrNotEmpty.with(err)
	case errors.Is(err, fs.ErrExist):
		return ErrPathExists.with(err)
	case errors.Is(err, syscall.EISDIR):
		return ErrIsDirectory.with(err)
	case errors.Is(err, syscall.ENOTDIR):
		return ErrNotDirectory.with(err)
	case errors.Is(err, syscall.EXDEV):
		return ErrCrossDevice.with(err)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return ErrPermission.with(err)
	case errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.ELOOP):
		return ErrBadPath.with(err)
	}
	return err
}

// tree is the file system as the byte-level operations see it.
func (e *Executor) tree() *files.Tree {
	return &files.Tree{Workspace: e.opts.WorkDir, Owner: e.fileOwner()}
}

// FileEntry describes one file-system entry. Front ends map it to their
// wire format.
type FileEntry struct {
	// Name is the base name; Path the path as the request named it,
	// cleaned.
	Name, Path string
	Type       FileType
	Size       int64
	// Mode holds the permission bits and fs.ModeSetuid, fs.ModeSetgid
	// and fs.ModeSticky, nothing else.
	Mode     fs.FileMode
	Modified time.Time
	UID      int
	GID      int
	// Target is a symlink's target as stored in the link; empty for
	// anything else.
	Target string
}

// FileType is the type of a FileEntry.
type FileType int

// The types of a FileEntry.
const (
	// FileOther is anything but a regular file, a directory or a symlink
	// (a device, a socket, a FIFO).
	FileOther FileType = iota
	FileRegular
	FileDir
	FileSymlink
)

// fileEntry converts a component entry to the executor's, so a rename
// inside files/ cannot change what clients receive.
func fileEntry(en files.Entry) FileEntry {
	return FileEntry{
		Name:     en.Name,
		Path:     en.Path,
		Type:     fileType(en.Type),
		Size:     en.Size,
		Mode:     en.Mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky),
		Modified: en.ModTime,
		UID:      en.UID,
		GID:      en.GID,
		Target:   en.Target,
	}
}

// fileType is a component entry's type as the executor reports it.
func fileType(t string) FileType {
	switch t {
	case files.TypeFile:
		return FileRegular
	case files.TypeDir:
		return FileDir
	case files.TypeSymlink:
		return FileSymlink
	}
	return FileOther
}

// FileWritten is what WriteFile did.
type FileWritten struct {
	// Bytes is how many bytes the call wrote.
	Bytes int64
	// Size is the file's size afterwards.
	Size int64
}

// StatFile describes the entry at path, not following a final symlink.
func (e *Executor) StatFile(path string) (FileEntry, error) {
	var en files.Entry
	err := e.fsUser.Do(func() error {
		var err error
		en, err = e.tree().Stat(path)
		return err
	})
	if err != nil {
		return FileEntry{}, fsError(err)
	}
	return fileEntry(en), nil
}

// ListDir describes the entries of the directory at path, by name; never
// nil when err is nil.
func (e *Executor) ListDir(path string) ([]FileEntry, error) {
	var entries []files.Entry
	err := e.fsUser.Do(func() error {
		var err error
		entries, err = e.tree().ListDir(path)
		return err
	})
	if err != nil {
		return nil, fsError(err)
	}
	out := make([]FileEntry, len(entries))
	for i, en := range entries {
		out[i] = fileEntry(en)
	}
	return out, nil
}

// OpenFile opens the regular file at path for reading; the caller closes
// it.
func (e *Executor) OpenFile(path string) (*os.File, FileEntry, error) {
	var f *os.File
	var en files.Entry
	err := e.fsUser.Do(func() error {
		var err error
		f, en, err = e.tree().OpenRead(path)
		return err
	})
	if err != nil {
		return nil, FileEntry{}, fsError(err)
	}
	return f, fileEntry(en), nil
}

// FileWrite is how WriteFile stores a body.
type FileWrite struct {
	// Mode of a new file, in octal; empty means "0644".
	Mode string
	// Parents creates the missing directories above the file.
	Parents bool
	// Offset, when not nil, writes in place from there (a resumed
	// upload); otherwise the file is replaced whole, atomically.
	Offset *int64
	// Size is the body's announced length; negative when unknown.
	Size int64
}

// WriteFile streams body into the file at path.
func (e *Executor) WriteFile(ctx context.Context, path string, body io.Reader, w FileWrite) (FileWritten, error) {
	opts := files.WriteOptions{Parents: w.Parents, Offset: w.Offset, Size: w.Size}
	if w.Mode != "" {
		m, err := files.ParseMode(w.Mode)
		if err != nil {
			return FileWritten{}, ErrBadMode.with(err)
		}
		opts.Mode = m
	}
	t := e.tree()
	var n int64
	err := e.fsUser.Do(func() error {
		var err error
		n, err = t.Write(ctx, path, body, opts)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return FileWritten{}, fmt.Errorf("write %s: %w", path, ctx.Err())
		}
		return FileWritten{}, fsError(err)
	}
	out := FileWritten{Bytes: n, Size: n}
	if w.Offset != nil {
		out.Size += *w.Offset
	}
	return out, nil
}

// Mkdir creates a directory; with parents, as mkdir -p.
func (e *Executor) Mkdir(path, mode string, parents bool) error {
	var m fs.FileMode
	if mode != "" {
		var err error
		if m, err = files.ParseMode(mode); err != nil {
			return ErrBadMode.with(err)
		}
	}
	return fsError(e.fsUser.Do(func() error { return e.tree().Mkdir(path, m, parents) }))
}

// MoveFile renames from to to; overwrite replaces an existing to.
func (e *Executor) MoveFile(from, to string, overwrite bool) error {
	return fsError(e.fsUser.Do(func() error { return e.tree().Move(from, to, overwrite) }))
}

// RemoveFile deletes the entry at path; a directory with its contents
// only when recursive.
func (e *Executor) RemoveFile(path string, recursive bool) error {
	return fsError(e.fsUser.Do(func() error { return e.tree().Remove(path, recursive) }))
}

// Chmod sets the mode of path, in octal.
func (e *Executor) Chmod(path, mode string) error {
	m, err := files.ParseMode(mode)
	if err != nil {
		return ErrBadMode.with(err)
	}
	return fsError(e.fsUser.Do(func() error { return e.tree().Chmod(path, m) }))
}
