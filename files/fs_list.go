package files

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"
)

// MaxListEntries bounds a listing, so one huge directory cannot take the
// server's memory.
const MaxListEntries = 100_000

// ErrTooManyEntries: a directory holds more than MaxListEntries entries.
var ErrTooManyEntries = errors.New("directory has too many entries to list")

// ListDir describes the entries of the directory at p (following p if it
// is a symlink, under the tree's rule), sorted by name; entries are not
// followed. An entry that vanishes while it is listed is left out.
func (t *Tree) ListDir(p string) (list []Entry, err error) {
	err = t.do(func() error { list, err = t.listDir(p); return err })
	return list, err
}

func (t *Tree) listDir(p string) ([]Entry, error) {
	r, err := t.resolve(p)
	if err != nil {
		return nil, err
	}
	f, err := t.open(r, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	for {
		batch, err := f.Readdirnames(1024)
		names = append(names, batch...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", r.clean, err)
		}
		if len(names) > MaxListEntries {
			return nil, fmt.Errorf("%w: %s (more than %d)", ErrTooManyEntries, r.clean, MaxListEntries)
		}
	}
	sort.Strings(names)
	out := make([]Entry, 0, len(names))
	for _, name := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(int(f.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return nil, &fs.PathError{Op: "stat", Path: filepath.Join(r.clean, name), Err: err}
		}
		e := entryOf(name, filepath.Join(r.clean, name), &st)
		if e.Type == TypeSymlink {
			e.Target, _ = readlinkat(f, name)
		}
		out = append(out, e)
	}
	return out, nil
}
