package files

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Mkdir creates the directory p with mode (0 means 0755); with parents it
// also creates the missing directories above it and accepts a directory
// that exists already, as mkdir -p does. What it creates belongs to the
// tree's owner.
func (t *Tree) Mkdir(p string, mode fs.FileMode, parents bool) error {
	return t.do(func() error { return t.mkdir(p, mode, parents) })
}

func (t *Tree) mkdir(p string, mode fs.FileMode, parents bool) error {
	r, err := t.resolve(p)
	if err != nil {
		return err
	}
	if mode == 0 {
		mode = 0o755
	}
	if parents {
		return t.mkdirAll(r, r.rel, mode)
	}
	dir, name, err := t.parent(r)
	if err != nil {
		return err
	}
	defer dir.Close()
	return t.mkdirAt(dir, name, r.clean, mode)
}

// mkdirAt creates name in dir and gives it the tree's owner and mode.
func (t *Tree) mkdirAt(dir interface{ Fd() uintptr }, name, path string, mode fs.FileMode) error {
	if err := unix.Mkdirat(int(dir.Fd()), name, 0o700); err != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	// Owner and mode are set on the new directory, opened without
	// following links, so a swap for a symlink cannot redirect them.
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	if !t.Owner.IsKeep() {
		if err := unix.Fchown(fd, t.Owner.UID(), t.Owner.GID()); err != nil {
			return &fs.PathError{Op: "chown", Path: path, Err: err}
		}
	}
	if err := unix.Fchmod(fd, unixMode(mode)); err != nil {
		return &fs.PathError{Op: "chmod", Path: path, Err: err}
	}
	return nil
}

// mkdirAll creates rel (relative to r's base) with mode, and its missing
// parents with 0755, each step resolved under r's rule.
func (t *Tree) mkdirAll(r resolved, rel string, mode fs.FileMode) error {
	if rel == "." {
		return nil
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		step := r
		step.rel = filepath.Join(parts[:i+1]...)
		if step.rel == ".." || strings.HasPrefix(step.rel, "../") {
			return ErrEscapes
		}
		if f, err := t.open(step, unix.O_PATH|unix.O_DIRECTORY, 0); err == nil {
			f.Close()
			continue
		} else if !errors.Is(err, unix.ENOENT) {
			return err
		}
		dir, name, err := t.parent(step)
		if err != nil {
			return err
		}
		m := fs.FileMode(0o755) // parents, as mkdir -p -m gives them
		if i == len(parts)-1 {
			m = mode
		}
		err = t.mkdirAt(dir, name, filepath.Join(r.base, step.rel), m)
		dir.Close()
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return err
		}
	}
	return nil
}
