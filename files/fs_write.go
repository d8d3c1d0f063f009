package files

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// WriteOptions are the options of Tree.Write.
type WriteOptions struct {
	// Mode is a new file's mode; 0 means 0644. An existing file keeps its
	// own mode and owner.
	Mode fs.FileMode
	// Parents creates the missing directories above the file.
	Parents bool
	// Offset, when not nil, writes in place: the existing file is cut to
	// *Offset bytes (which it must have) and the body appended, so an
	// interrupted upload can be resumed. Without it the file is replaced
	// as a whole: the body goes to a temporary file beside it, renamed
	// over the name only once complete, so a failure (a full disk, a
	// dropped connection) leaves the old file or none.
	Offset *int64
	// Size, when not negative, is the length the body must have; a
	// shorter body is ErrSizeMismatch and leaves no file.
	Size int64
}

// ErrOffsetBeyondEnd: a write in place at an offset past the file's end.
var ErrOffsetBeyondEnd = errors.New("offset is beyond the end of the file")

// copyBufferSize is the buffer a write copies its body through: large
// enough that a fast body costs few system calls.
const copyBufferSize = 64 << 10

// Write stores the bytes of body at p, read until EOF or until ctx ends,
// and returns how many it wrote. A symlink at p is followed to its target
// (under the tree's rule). What it creates belongs to the tree's owner.
func (t *Tree) Write(ctx context.Context, p string, body io.Reader, opts WriteOptions) (n int64, err error) {
	err = t.do(func() error { n, err = t.write(ctx, p, body, opts); return err })
	return n, err
}

func (t *Tree) write(ctx context.Context, p string, body io.Reader, opts WriteOptions) (int64, error) {
	r, err := t.resolve(p)
	if err != nil {
		return 0, err
	}
	if opts.Parents && r.rel != "." {
		if err := t.mkdirAll(r, filepath.Dir(r.rel), 0o755); err != nil {
			return 0, err
		}
	}
	if r, err = t.followFinal(r); err != nil {
		return 0, err
	}
	dir, name, err := t.parent(r)
	if err != nil {
		return 0, err
	}
	defer dir.Close()
	if opts.Offset != nil {
		return t.writeAt(ctx, dir, name, r.clean, body, *opts.Offset, opts.Size)
	}
	return t.replace(ctx, dir, name, r.clean, body, opts)
}

// replace writes body to a temporary file in dir and renames it to name.
func (t *Tree) replace(ctx context.Context, dir *os.File, name, path string, body io.Reader, opts WriteOptions) (int64, error) {
	mode := opts.Mode
	if mode == 0 {
		mode = 0o644
	}
	var old unix.Stat_t
	exists := false
	switch err := unix.Fstatat(int(dir.Fd()), name, &old, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil && old.Mode&unix.S_IFMT == unix.S_IFDIR:
		return 0, &fs.PathError{Op: "write", Path: path, Err: unix.EISDIR}
	case err == nil && old.Mode&unix.S_IFMT != unix.S_IFREG:
		return 0, fmt.Errorf("%w: %s exists and is not a regular file", ErrNotRegular, path)
	case err == nil:
		exists = true
	case !errors.Is(err, unix.ENOENT):
		return 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}

	tmpName, tmp, err := createTemp(dir, name)
	if err != nil {
		return 0, &fs.PathError{Op: "create", Path: path, Err: err}
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			unix.Unlinkat(int(dir.Fd()), tmpName, 0)
		}
	}()
	n, err := t.copyBody(ctx, tmp, body)
	if err != nil {
		return n, fmt.Errorf("write %s: %w", path, err)
	}
	if opts.Size >= 0 && n != opts.Size {
		return n, fmt.Errorf("%w: %s got %d of %d bytes", ErrSizeMismatch, path, n, opts.Size)
	}
	// chown before chmod: chown clears the set-id bits chmod sets.
	if exists {
		if err := tmp.Chown(int(old.Uid), int(old.Gid)); err != nil && !errors.Is(err, unix.EPERM) {
			return n, fmt.Errorf("keep the owner of %s: %w", path, err)
		}
		err = unix.Fchmod(int(tmp.Fd()), old.Mode&0o7777)
	} else {
		if err := t.chownFd(tmp); err != nil {
			return n, fmt.Errorf("set the owner of %s: %w", path, err)
		}
		err = unix.Fchmod(int(tmp.Fd()), unixMode(mode))
	}
	if err != nil {
		return n, fmt.Errorf("set the mode of %s: %w", path, err)
	}
	// Closing can report a delayed write error (NFS, a full disk).
	if err := tmp.Close(); err != nil {
		return n, fmt.Errorf("write %s: %w", path, err)
	}
	if err := unix.Renameat(int(dir.Fd()), tmpName, int(dir.Fd()), name); err != nil {
		return n, &fs.PathError{Op: "rename", Path: path, Err: err}
	}
	done = true
	return n, nil
}

// createTemp creates a new, empty, private file beside name in dir.
func createTemp(dir *os.File, name string) (string, *os.File, error) {
	for range 10 {
		var b [6]byte
		rand.Read(b[:])
		tmpName := "." + name + ".upload-" + hex.EncodeToString(b[:])
		if len(tmpName) > 255 {
			tmpName = ".upload-" + hex.EncodeToString(b[:])
		}
		fd, err := unix.Openat(int(dir.Fd()), tmpName, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		return tmpName, os.NewFile(uintptr(fd), tmpName), nil
	}
	return "", nil, unix.EEXIST
}

// writeAt cuts the existing file name in dir to off bytes and appends body.
func (t *Tree) writeAt(ctx context.Context, dir *os.File, name, path string, body io.Reader, off, size int64) (int64, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0, fmt.Errorf("%w: %s", ErrNotRegular, path)
	}
	if off < 0 || off > st.Size {
		return 0, fmt.Errorf("%w: %s has %d bytes, offset %d", ErrOffsetBeyondEnd, path, st.Size, off)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	if err := f.Truncate(off); err != nil {
		return 0, fmt.Errorf("truncate %s: %w", path, err)
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return 0, fmt.Errorf("seek %s: %w", path, err)
	}
	n, err := t.copyBody(ctx, f, body)
	if err != nil {
		return n, fmt.Errorf("write %s: %w", path, err)
	}
	if size >= 0 && n != size {
		return n, fmt.Errorf("%w: %s got %d of %d bytes", ErrSizeMismatch, path, n, size)
	}
	if err := f.Close(); err != nil {
		return n, fmt.Errorf("write %s: %w", path, err)
	}
	return n, nil
}

// copyBody copies body into f through one buffer, stopping when ctx ends.
func (t *Tree) copyBody(ctx context.Context, f *os.File, body io.Reader) (int64, error) {
	var w io.Writer = f
	if t.writeHook != nil {
		w = t.writeHook(w)
	}
	buf := make([]byte, copyBufferSize)
	// The struct hides f's ReadFrom, which would take over with its own
	// buffer.
	return io.CopyBuffer(struct{ io.Writer }{w}, ctxReader{ctx, body}, buf)
}
