package files

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actionserver/actionserver/internal/chown"
)

// The byte-level file operations of the native API (fs_*.go, one file per
// operation) go through a Tree. Every system call they make is in these
// files, behind small functions, so the whole set can be routed through a
// mechanism that acts with the sandbox user's rights.
//
// Paths: an absolute path names that path on the machine, symlinks
// followed as open(2) follows them. A relative path names a path beneath
// the workspace: it is resolved by the kernel (openat2 with
// RESOLVE_BENEATH), so neither ".." nor a symlink, at any step, can lead
// out of the workspace. In both forms magic links (/proc/<pid>/fd/...) are
// never followed. The last component of a path is not followed by stat,
// remove and move (they act on a link itself); read, write, chmod and list
// follow it, under the same rule.

// Errors of the byte-level file operations.
var (
	// ErrBadPath: a path that is empty, too long or holds a NUL byte.
	ErrBadPath = errors.New("invalid path")
	// ErrEscapes: a relative path that leads out of the workspace.
	ErrEscapes = errors.New("path leads out of the workspace")
	// ErrIsRoot: an operation that cannot act on the tree's root itself.
	ErrIsRoot = errors.New("cannot act on the root of the tree itself")
	// ErrNotRegular: a read of something that is not a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrSizeMismatch: an upload that ended before its announced length.
	ErrSizeMismatch = errors.New("body shorter than its Content-Length")
)

// maxPathLen is PATH_MAX, with its NUL.
const maxPathLen = 4095

// Tree is the file system as the byte-level API sees it. With an empty
// Workspace, relative paths are confined to the current directory.
type Tree struct {
	// Workspace is the directory relative paths are resolved beneath.
	Workspace string
	// Owner is given to the files and directories an operation creates
	// (chown.Keep leaves them as the process makes them).
	Owner chown.Owner
	// Do, when set, runs each operation whole (every lookup, open,
	// create, write and rename it makes) as Do(op): the seam where the
	// operations take the sandbox user's filesystem rights. Nil runs them
	// with the server's own.
	Do func(op func() error) error
	// writeHook, when set (by tests), wraps the writer of an upload, so
	// a test can inject a fault such as a full disk.
	writeHook func(io.Writer) io.Writer
}

// Entry describes one file-system entry.
type Entry struct {
	// Name is the base name; Path the path as the request named it,
	// cleaned.
	Name, Path string
	// Type is "file", "dir", "symlink" or "other".
	Type    string
	Size    int64
	Mode    fs.FileMode // permission and set-id bits only
	ModTime time.Time
	UID     int
	GID     int
	// Target is a symlink's target, as stored in the link.
	Target string
}

// Entry types.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeOther   = "other"
)

// resolved is a request path split for the *at system calls: the
// directory its resolution starts from and the path relative to it.
type resolved struct {
	base    string // absolute directory: "/" or the workspace
	rel     string // clean, relative, "." for the base itself
	beneath bool   // confined to base
	clean   string // the request's path, cleaned
}

// resolve checks a request path and splits it.
func (t *Tree) resolve(p string) (resolved, error) {
	if p == "" || len(p) > maxPathLen || strings.IndexByte(p, 0) >= 0 {
		return resolved{}, fmt.Errorf("%w: %q", ErrBadPath, p)
	}
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		rel := strings.TrimPrefix(c, "/")
		if rel == "" {
			rel = "."
		}
		return resolved{base: "/", rel: rel, clean: c}, nil
	}
	ws := t.Workspace
	if ws == "" {
		ws = "."
	}
	return resolved{base: ws, rel: filepath.Clean(p), beneath: true, clean: filepath.Clean(p)}, nil
}

// how is the openat2 resolution of r.
func (r resolved) how(flags uint64) *unix.OpenHow {
	res := uint64(unix.RESOLVE_NO_MAGICLINKS)
	if r.beneath {
		res |= unix.RESOLVE_BENEATH
	}
	return &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: res}
}

// open opens r's path (following a final symlink, under r's rule).
func (t *Tree) open(r resolved, flags uint64, mode uint64) (*os.File, error) {
	basefd, err := unix.Open(r.base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: r.base, Err: err}
	}
	defer unix.Close(basefd)
	how := r.how(flags)
	how.Mode = mode
	for {
		fd, err := unix.Openat2(basefd, r.rel, how)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			if err == unix.EXDEV && r.beneath {
				return nil, fmt.Errorf("%w: %s", ErrEscapes, r.clean)
			}
			return nil, &fs.PathError{Op: "open", Path: r.clean, Err: err}
		}
		return os.NewFile(uintptr(fd), r.clean), nil
	}
}

// parent opens the directory that holds r's last component and returns
// it with that component's name. The tree's root has no parent here.
func (t *Tree) parent(r resolved) (*os.File, string, error) {
	if r.rel == "." || r.rel == ".." || strings.HasPrefix(r.rel, "../") {
		if r.rel == "." {
			return nil, "", fmt.Errorf("%w: %s", ErrIsRoot, r.clean)
		}
		return nil, "", fmt.Errorf("%w: %s", ErrEscapes, r.clean)
	}
	dir, name := filepath.Split(r.rel)
	if dir == "" {
		dir = "."
	}
	d := r
	d.rel = filepath.Clean(dir)
	f, err := t.open(d, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, "", err
	}
	return f, name, nil
}

// maxSymlinkFollow bounds the symlinks a write follows, as ELOOP does.
const maxSymlinkFollow = 40

// followFinal follows r's last component while it is a symlink, by the
// link's text, so a write replaces the link's target and not the link.
// The parent of what it returns is opened under r's rule again, so a
// target outside the workspace is still refused by the kernel.
func (t *Tree) followFinal(r resolved) (resolved, error) {
	for range maxSymlinkFollow {
		dir, name, err := t.parent(r)
		if err != nil {
			return r, err
		}
		target, err := readlinkat(dir, name)
		dir.Close()
		if err != nil {
			// Not a link, or not there: the path is final.
			return r, nil
		}
		next := target
		if !filepath.IsAbs(target) {
			next = filepath.Join(filepath.Dir(r.rel), target)
			if !r.beneath {
				next = "/" + next
			}
		} else if r.beneath {
			ws, err := filepath.Abs(r.base)
			if err != nil {
				return r, err
			}
			rel, err := filepath.Rel(ws, target)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				return r, fmt.Errorf("%w: %s", ErrEscapes, r.clean)
			}
			next = rel
		}
		clean := r.clean
		if r, err = t.resolve(next); err != nil {
			return r, err
		}
		if r.beneath && (r.rel == ".." || strings.HasPrefix(r.rel, "../")) {
			return r, fmt.Errorf("%w: %s", ErrEscapes, clean)
		}
		r.clean = clean
	}
	return r, &fs.PathError{Op: "open", Path: r.clean, Err: syscall.ELOOP}
}

// readlinkat returns the target of the symlink name in dir.
func readlinkat(dir *os.File, name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(int(dir.Fd()), name, buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, 2*len(buf))
	}
}

// entryOf builds an Entry from a stat result.
func entryOf(name, path string, st *unix.Stat_t) Entry {
	e := Entry{
		Name: name, Path: path, Size: st.Size,
		Mode:    fs.FileMode(st.Mode & 0o777),
		ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC(),
		UID:     int(st.Uid), GID: int(st.Gid),
	}
	if st.Mode&unix.S_ISUID != 0 {
		e.Mode |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		e.Mode |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		e.Mode |= fs.ModeSticky
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		e.Type = TypeFile
	case unix.S_IFDIR:
		e.Type = TypeDir
	case unix.S_IFLNK:
		e.Type = TypeSymlink
	default:
		e.Type = TypeOther
	}
	return e
}

// unixMode turns permission and set-id bits into chmod(2)'s.
func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		u |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		u |= unix.S_ISVTX
	}
	return u
}

// chownFd gives a file the tree's owner, unless it keeps the process's.
func (t *Tree) chownFd(f *os.File) error {
	if t.Owner.IsKeep() {
		return nil
	}
	return f.Chown(t.Owner.UID(), t.Owner.GID())
}

// do runs op through t.Do, if set.
func (t *Tree) do(op func() error) error {
	if t.Do == nil {
		return op()
	}
	return t.Do(op)
}
