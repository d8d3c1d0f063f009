package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/actionserver/actionserver/internal/chown"
)

// ErrNotPlainName is returned by ReceiveFile for a name with a directory
// part, or "." or "..".
var ErrNotPlainName = errors.New("not a plain file name")

// uploadFileMode is the mode of a file an upload creates: what open(2)
// gives under the usual umask, as upstream's server leaves it.
const uploadFileMode fs.FileMode = 0o644

// MkdirAll creates dir and its missing parents, giving each directory it
// creates to owner (chown.Keep leaves them the server's).
func MkdirAll(dir string, owner chown.Owner) error {
	if err := mkdirAllOwned(dir, owner); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}

// ReceiveFile streams r into dir/name until EOF and returns the bytes
// written. The file is replaced atomically, so a transfer that fails midway
// leaves the old file (or none) rather than a part; an existing file keeps
// its mode and owner, a new one gets mode 0644 and owner. name must be a
// plain file name. Memory use does not depend on the size of the content.
func ReceiveFile(ctx context.Context, dir, name string, r io.Reader, owner chown.Owner) (int64, error) {
	if !isPlainName(name) {
		return 0, fmt.Errorf("receive file %q: %w", name, ErrNotPlainName)
	}
	n, err := replaceFile(ctx, filepath.Join(dir, name), r, uploadFileMode, owner, false)
	if err != nil {
		return n, fmt.Errorf("receive %s: %w", filepath.Join(dir, name), err)
	}
	return n, nil
}

// ReceiveZip streams the zip archive in r to a temporary file in dir,
// unpacks it into dir with ExtractZip (so unsafe entries refuse the whole
// archive) and removes the temporary file whatever happens.
func ReceiveZip(ctx context.Context, dir string, r io.Reader, owner chown.Owner) error {
	tmp, err := os.CreateTemp(dir, ".upload-*.zip")
	if err != nil {
		return fmt.Errorf("receive zip: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, ctxReader{ctx, r})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("receive zip into %s: %w", dir, err)
	}
	return ExtractZip(ctx, tmp.Name(), dir, owner)
}

// isPlainName reports whether name names an entry of a directory rather
// than a path that could leave it.
func isPlainName(name string) bool {
	return name != "" && name != "." && name != ".." && filepath.Base(name) == name
}
