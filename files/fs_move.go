package files

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// Move renames from to to. A symlink is moved itself, not its target. An
// existing to is replaced only with overwrite (a directory only when it
// is empty, as rename(2) does). Both must be on one file system.
func (t *Tree) Move(from, to string, overwrite bool) error {
	return t.do(func() error { return t.move(from, to, overwrite) })
}

func (t *Tree) move(from, to string, overwrite bool) error {
	rf, err := t.resolve(from)
	if err != nil {
		return err
	}
	rt, err := t.resolve(to)
	if err != nil {
		return err
	}
	fdir, fname, err := t.parent(rf)
	if err != nil {
		return err
	}
	defer fdir.Close()
	tdir, tname, err := t.parent(rt)
	if err != nil {
		return err
	}
	defer tdir.Close()
	flags := uint(unix.RENAME_NOREPLACE)
	if overwrite {
		flags = 0
	}
	if err := unix.Renameat2(int(fdir.Fd()), fname, int(tdir.Fd()), tname, flags); err != nil {
		return &fs.PathError{Op: "move", Path: fmt.Sprintf("%s to %s", rf.clean, rt.clean), Err: err}
	}
	return nil
}
