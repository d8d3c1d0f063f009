package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/actionserver/actionserver/internal/chown"
)

var syscallEISDIR = syscall.EISDIR

// newFileMode is the mode Write gives a file it creates.
const newFileMode fs.FileMode = 0o664

// Write implements the "write" action. path is resolved against cwd (see
// Resolve); missing parent directories are created (owned by owner). A new
// file gets every line of content followed by "\n" (so content always ends
// up newline-terminated), mode 0664 and owner. An existing file keeps lines
// [0, start) and [end, n) around the new lines (start 0 and end -1 replace
// everything, and negative indexes count from the end as Python slices do),
// and keeps its mode and owner. A symlink is written through to its target.
// The file is replaced atomically: readers never see a partial write.
//
// Agent-facing failures are *Error values with the exact observation text:
// a directory, an existing file that is not UTF-8, and content written but
// ownership not settable; also an existing file that is not a regular one
// (a FIFO would block the read forever). Other errors are server faults.
// ctx ends the write before the file is replaced.
func Write(ctx context.Context, cwd, path, content string, start, end int, owner chown.Owner) error {
	abs := Resolve(cwd, path)
	if err := mkdirAllOwned(filepath.Dir(abs), owner); err != nil {
		return fmt.Errorf("create parent of %s: %w", abs, err)
	}

	insert := strings.Split(content, "\n")
	var out strings.Builder
	fi, err := os.Stat(abs)
	switch {
	case err == nil && fi.IsDir():
		return errorf(nil, "Path is a directory: %s. You can only write to files", abs)
	case err == nil && !fi.Mode().IsRegular():
		return errorf(nil, "Path is not a regular file: %s. You can only write to files", abs)
	case err == nil:
		data, err := readExisting(abs)
		if errors.Is(err, ErrNotRegular) {
			return errorf(nil, "Path is not a regular file: %s. You can only write to files", abs)
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", abs, err)
		}
		if !utf8.Valid(data) {
			return errorf(nil, "File could not be decoded as utf-8: %s", abs)
		}
		old := splitLinesKeepEnds(universalNewlines(string(data)))
		if start != 0 {
			out.WriteString(strings.Join(pyHead(old, start), ""))
		}
		for _, l := range insert {
			out.WriteString(l + "\n")
		}
		if end != -1 {
			out.WriteString(strings.Join(pyTail(old, end), ""))
		}
	case errors.Is(err, fs.ErrNotExist):
		for _, l := range insert {
			out.WriteString(l + "\n")
		}
	default:
		return fmt.Errorf("stat %s: %w", abs, err)
	}

	_, err = replaceFile(ctx, abs, strings.NewReader(out.String()), newFileMode, owner, true)
	var ce *chownError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotRegular):
		return errorf(err, "Path is not a regular file: %s. You can only write to files", abs)
	case errors.As(err, &ce):
		return errorf(err, "File %s written, but failed to change ownership and permissions: %s", abs, pyOSError(&fs.PathError{Op: "chown", Path: abs, Err: ce.err}))
	case errors.Is(err, fs.ErrNotExist):
		return errorf(err, "File not found: %s", abs)
	case errors.Is(err, syscall.EISDIR):
		return errorf(err, "Path is a directory: %s. You can only write to files", abs)
	}
	return fmt.Errorf("write %s: %w", abs, err)
}

// readExisting reads the file at p without waiting on a FIFO swapped in
// after a check: the open does not block, and the opened file is checked.
func readExisting(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: p, Err: ErrNotRegular}
	}
	return io.ReadAll(f)
}

// pyIndex turns a Python slice bound into an index in [0, n].
func pyIndex(k, n int) int {
	if k < 0 {
		k += n
	}
	return min(max(k, 0), n)
}

// pyHead mirrors Python's s[:k]; pyTail mirrors s[k:].
func pyHead(s []string, k int) []string { return s[:pyIndex(k, len(s))] }

func pyTail(s []string, k int) []string { return s[pyIndex(k, len(s)):] }

// mkdirAllOwned creates dir and its missing parents, giving each directory it
// creates to owner.
func mkdirAllOwned(dir string, owner chown.Owner) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirAllOwned(parent, owner); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	if !owner.IsKeep() {
		if err := os.Lchown(dir, owner.UID(), owner.GID()); err != nil {
			return err
		}
	}
	return nil
}
