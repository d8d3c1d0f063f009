package files

import (
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Stat describes the entry at p without following it if it is a symlink.
func (t *Tree) Stat(p string) (e Entry, err error) {
	err = t.do(func() error { e, err = t.stat(p); return err })
	return e, err
}

func (t *Tree) stat(p string) (Entry, error) {
	r, err := t.resolve(p)
	if err != nil {
		return Entry{}, err
	}
	if r.rel == "." {
		f, err := t.open(r, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return Entry{}, err
		}
		defer f.Close()
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			return Entry{}, &fs.PathError{Op: "stat", Path: r.clean, Err: err}
		}
		return entryOf(filepath.Base(r.clean), r.clean, &st), nil
	}
	dir, name, err := t.parent(r)
	if err != nil {
		return Entry{}, err
	}
	defer dir.Close()
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Entry{}, &fs.PathError{Op: "stat", Path: r.clean, Err: err}
	}
	e := entryOf(name, r.clean, &st)
	if e.Type == TypeSymlink {
		if e.Target, err = readlinkat(dir, name); err != nil {
			return Entry{}, fmt.Errorf("read link %s: %w", r.clean, err)
		}
	}
	return e, nil
}
