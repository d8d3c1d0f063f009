package files

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// OpenRead opens the regular file at p for reading (following p if it is
// a symlink, under the tree's rule) and describes it. The caller closes
// the file.
func (t *Tree) OpenRead(p string) (f *os.File, e Entry, err error) {
	err = t.do(func() error { f, e, err = t.openRead(p); return err })
	return f, e, err
}

func (t *Tree) openRead(p string) (*os.File, Entry, error) {
	r, err := t.resolve(p)
	if err != nil {
		return nil, Entry{}, err
	}
	// O_NONBLOCK: opening a FIFO must not wait for a writer; it is
	// refused below as not regular.
	f, err := t.open(r, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, Entry{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, Entry{}, &fs.PathError{Op: "stat", Path: r.clean, Err: err}
	}
	e := entryOf(filepath.Base(r.clean), r.clean, &st)
	if e.Type != TypeFile {
		f.Close()
		return nil, Entry{}, fmt.Errorf("%w: %s is a %s", ErrNotRegular, r.clean, e.Type)
	}
	// Back to blocking reads, so the runtime does not poll a disk file.
	if err := unix.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, Entry{}, fmt.Errorf("open %s: %w", r.clean, err)
	}
	return f, e, nil
}
