package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// writeURLFile writes the file viewer's address to path when the file is
// this server's to own: it does not exist yet (it is then created, never
// through a link), or it is a regular file of the server's own user with
// no other name. Anything else is left alone and the reason returned: in
// a shared /tmp the file may be another server's (one of another user,
// which a server that is not root cannot write anyway), or a link the
// agent planted to make a root server overwrite a file of its choice.
func writeURLFile(path, url string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if errors.Is(err, fs.ErrExist) {
		// O_NONBLOCK: a FIFO planted there must not hold start-up.
		f, err = os.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		switch {
		case errors.Is(err, syscall.ELOOP):
			return errors.New("it is a symbolic link")
		case errors.Is(err, syscall.ENXIO):
			return errors.New("it is not a regular file (a FIFO)")
		}
		if err == nil {
			if err = ownFile(f); err != nil {
				f.Close()
				return err
			}
		}
	}
	if err != nil {
		return err
	}
	// Written in place, truncated after: a reader sees the old address or
	// the new one, and ext4 does not flush a file truncated to zero first.
	_, err = f.WriteAt([]byte(url), 0)
	if err == nil {
		err = f.Truncate(int64(len(url)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ownFile returns why an existing file is not this server's to write, or
// nil.
func ownFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("it is not a regular file (%s)", fi.Mode().Type())
	case !ok:
		return errors.New("its owner is unknown")
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("it belongs to uid %d, not to this server's uid %d", st.Uid, os.Geteuid())
	case st.Nlink != 1:
		return fmt.Errorf("it has %d names (hard links)", st.Nlink)
	}
	return nil
}
