package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/actionserver/actionserver/api"
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

// fileInfo converts a component entry to the wire's.
func fileInfo(en files.Entry) api.FileInfo {
	mode := uint32(en.Mode.Perm())
	if en.Mode&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if en.Mode&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if en.Mode&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return api.FileInfo{Name: en.Name, Path: en.Path, Type: en.Type, Size: en.Size,
		Mode: fmt.Sprintf("%04o", mode), Modified: en.ModTime, UID: en.UID, GID: en.GID, Target: en.Target}
}

// StatFile describes the entry at path, not following a final symlink.
func (e *Executor) StatFile(path string) (api.FileInfo, error) {
	var en files.Entry
	err := e.fsUser.Do(func() error {
		var err error
		en, err = e.tree().Stat(path)
		return err
	})
	if err != nil {
		return api.FileInfo{}, fsError(err)
	}
	return fileInfo(en), nil
}

// ListDir describes the entries of the directory at path, by name.
func (e *Executor) ListDir(path string) (api.FileList, error) {
	var entries []files.Entry
	err := e.fsUser.Do(func() error {
		var err error
		entries, err = e.tree().ListDir(path)
		return err
	})
	if err != nil {
		return api.FileList{}, fsError(err)
	}
	out := api.FileList{Path: path, Entries: make([]api.FileInfo, len(entries))}
	for i, en := range entries {
		out.Entries[i] = fileInfo(en)
	}
	return out, nil
}

// OpenFile opens the regular file at path for reading; the caller closes
// it.
func (e *Executor) OpenFile(path string) (*os.File, api.FileInfo, error) {
	var f *os.File
	var en files.Entry
	err := e.fsUser.Do(func() error {
		var err error
		f, en, err = e.tree().OpenRead(path)
		return err
	})
	if err != nil {
		return nil, api.FileInfo{}, fsError(err)
	}
	return f, fileInfo(en), nil
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
func (e *Executor) WriteFile(ctx context.Context, path string, body io.Reader, w FileWrite) (api.FileWritten, error) {
	opts := files.WriteOptions{Parents: w.Parents, Offset: w.Offset, Size: w.Size}
	if w.Mode != "" {
		m, err := files.ParseMode(w.Mode)
		if err != nil {
			return api.FileWritten{}, ErrBadMode.with(err)
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
			return api.FileWritten{}, fmt.Errorf("write %s: %w", path, ctx.Err())
		}
		return api.FileWritten{}, fsError(err)
	}
	out := api.FileWritten{Path: path, Bytes: n, Size: n}
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
