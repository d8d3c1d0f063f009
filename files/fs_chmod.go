package files

import (
	"fmt"
	"io/fs"
	"strconv"

	"golang.org/x/sys/unix"
)

// Chmod sets the mode (permission and set-id bits) of p, following p if
// it is a symlink, under the tree's rule, as chmod(1) does.
func (t *Tree) Chmod(p string, mode fs.FileMode) error {
	return t.do(func() error { return t.chmod(p, mode) })
}

func (t *Tree) chmod(p string, mode fs.FileMode) error {
	r, err := t.resolve(p)
	if err != nil {
		return err
	}
	f, err := t.open(r, unix.O_PATH, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	// An O_PATH descriptor takes no fchmod; its /proc link names exactly
	// the inode opened, with no path to race on.
	proc := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if err := unix.Fchmodat(unix.AT_FDCWD, proc, unixMode(mode), 0); err != nil {
		return &fs.PathError{Op: "chmod", Path: r.clean, Err: err}
	}
	return nil
}

// ParseMode reads an octal mode such as "755" or "0644"; only permission
// and set-id bits (at most 07777) are accepted.
func ParseMode(s string) (fs.FileMode, error) {
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o7777 {
		return 0, fmt.Errorf("mode %q: an octal number up to 7777 is required", s)
	}
	var m fs.FileMode = fs.FileMode(n & 0o777)
	if n&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if n&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if n&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m, nil
}
