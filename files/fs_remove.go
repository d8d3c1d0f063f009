package files

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Remove deletes the entry at p; a symlink is removed itself. A directory
// is removed only when empty, unless recursive, which removes what it
// holds first without following any symlink inside.
func (t *Tree) Remove(p string, recursive bool) error {
	return t.do(func() error { return t.remove(p, recursive) })
}

func (t *Tree) remove(p string, recursive bool) error {
	r, err := t.resolve(p)
	if err != nil {
		return err
	}
	dir, name, err := t.parent(r)
	if err != nil {
		return err
	}
	defer dir.Close()
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "remove", Path: r.clean, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if err := unix.Unlinkat(int(dir.Fd()), name, 0); err != nil {
			return &fs.PathError{Op: "remove", Path: r.clean, Err: err}
		}
		return nil
	}
	if recursive {
		if err := removeContents(int(dir.Fd()), name); err != nil {
			return fmt.Errorf("remove %s: %w", r.clean, err)
		}
	}
	if err := unix.Unlinkat(int(dir.Fd()), name, unix.AT_REMOVEDIR); err != nil {
		return &fs.PathError{Op: "remove", Path: r.clean, Err: err}
	}
	return nil
}

// removeContents empties the directory name in dirfd, depth first; every
// step is relative to an open directory and never follows a link.
func removeContents(dirfd int, name string) error {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(fd), name)
	defer d.Close()
	for {
		names, err := d.Readdirnames(256)
		for _, n := range names {
			var st unix.Stat_t
			if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue
				}
				return err
			}
			flags := 0
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				if err := removeContents(fd, n); err != nil {
					return err
				}
				flags = unix.AT_REMOVEDIR
			}
			if err := unix.Unlinkat(fd, n, flags); err != nil && !errors.Is(err, unix.ENOENT) {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
