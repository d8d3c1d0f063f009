package files

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/actionserver/actionserver/internal/chown"
)

// exchangeSize is the size from which a streamed file replaces the old one
// by swapping names.
const exchangeSize = 8 << 20

// streamBufferSize is the write buffer of a streamed file.
const streamBufferSize = 256 << 10

// maxSymlinkHops bounds symlink resolution the way the kernel's ELOOP does.
const maxSymlinkHops = 40

// followLinks returns the path a write to p lands on: the final target of a
// chain of symlinks, which may not exist yet (a write through a dangling link
// creates its target, as open(2) does).
func followLinks(p string) (string, error) {
	for range maxSymlinkHops {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	return "", &fs.PathError{Op: "open", Path: p, Err: syscall.ELOOP}
}

// fileIdentity is what a rewrite must carry over from the file it replaces.
type fileIdentity struct {
	mode     fs.FileMode
	uid, gid int
}

func identityOf(fi fs.FileInfo) fileIdentity {
	id := fileIdentity{mode: fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), uid: -1, gid: -1}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.uid, id.gid = int(st.Uid), int(st.Gid)
	}
	return id
}

// chownError records that the content was written but the ownership or mode
// could not be set; the file is in place.
type chownError struct {
	path string
	err  error
}

func (e *chownError) Error() string {
	return fmt.Sprintf("set owner and mode of %s: %v", e.path, e.err)
}

func (e *chownError) Unwrap() error { return e.err }

// writeAtomic replaces the file at p (after following symlinks) with data:
// it writes a temporary file in the same directory, syncs it and renames it
// over the target, so a reader sees the old or the new content, never a
// part. An existing file keeps its mode and owner; a new one gets mode and
// owner. A failure to set ownership is a *chownError after the content is
// in place.
func writeAtomic(p string, data []byte, mode fs.FileMode, owner chown.Owner) error {
	_, err := replaceFile(context.Background(), p, bytes.NewReader(data), mode, owner, true)
	return err
}

// replaceFile is writeAtomic for content streamed from r, which it reads
// until EOF or until ctx ends; it returns the bytes written. durable syncs
// the file before the rename.
func replaceFile(ctx context.Context, p string, r io.Reader, mode fs.FileMode, owner chown.Owner, durable bool) (int64, error) {
	target, err := followLinks(p)
	if err != nil {
		return 0, err
	}
	id := fileIdentity{mode: mode, uid: owner.UID(), gid: owner.GID()}
	var oldSize int64
	existed := false
	if fi, err := os.Stat(target); err == nil {
		if fi.IsDir() {
			return 0, &fs.PathError{Op: "open", Path: p, Err: syscall.EISDIR}
		}
		if !fi.Mode().IsRegular() {
			return 0, &fs.PathError{Op: "open", Path: p, Err: ErrNotRegular}
		}
		id, oldSize, existed = identityOf(fi), fi.Size(), true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}

	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Report the path the caller asked for, as open(2) on it would.
			return 0, &fs.PathError{Op: "open", Path: p, Err: syscall.ENOENT}
		}
		if existed && errors.Is(err, fs.ErrPermission) {
			// A file the user may write in a directory the user may not:
			// in place, as the user would.
			return writeInPlace(ctx, r, target)
		}
		return 0, err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	// Streamed sources (multipart parts) hand out a few KB per read;
	// gathering them saves most write calls. The struct hides the
	// buffer's ReadFrom, which would hand the file the small reads.
	bw := bufio.NewWriterSize(tmp, streamBufferSize)
	n, err := io.Copy(struct{ io.Writer }{bw}, ctxReader{ctx, r})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return n, err
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			return n, err
		}
	}
	// chown before chmod: chown clears set-id bits that chmod restores.
	var ownErr error
	if id.uid >= 0 || id.gid >= 0 {
		ownErr = tmp.Chown(id.uid, id.gid)
	}
	if existed && errors.Is(ownErr, fs.ErrPermission) {
		// The server has the sandbox user's rights (see package asuser),
		// and the file is not the user's to give away: write it in place,
		// as the user would, so that it keeps its owner and mode.
		return n, copyInPlace(ctx, tmp, target)
	}
	if err := tmp.Chmod(id.mode); err != nil && ownErr == nil {
		ownErr = err
	}
	if err := tmp.Close(); err != nil {
		return n, err
	}
	if !durable && oldSize >= exchangeSize {
		// ext4 flushes a file renamed over another one before the rename
		// returns (its guard against empty files after a crash), which
		// made replacing a large upload three times slower than writing
		// it. Swapping the two names is just as atomic for readers and
		// is not flushed; the old content, now under the temporary
		// name, is removed in the background.
		if err := unix.Renameat2(unix.AT_FDCWD, tmp.Name(), unix.AT_FDCWD, target, unix.RENAME_EXCHANGE); err == nil {
			removeInBackground(tmp.Name())
			done = true
			return n, ownedOrErr(target, ownErr)
		}
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return n, err
	}
	done = true
	return n, ownedOrErr(target, ownErr)
}

// removeInBackground removes the file at p without waiting. The directory
// is opened here, with the caller's filesystem rights (which may be the
// sandbox user's, on this thread only), and the goroutine removes the name
// in it, so it never resolves a path with other rights.
func removeInBackground(p string) {
	dir, name := filepath.Split(p)
	if dir == "" {
		dir = "."
	}
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(p)
		return
	}
	go func() {
		unix.Unlinkat(dfd, name, 0)
		unix.Close(dfd)
	}()
}

// copyInPlace overwrites the regular file target with the content of src
// from its start.
func copyInPlace(ctx context.Context, src *os.File, target string) error {
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := writeInPlace(ctx, src, target)
	return err
}

// writeInPlace truncates the regular file target and writes r into it,
// keeping its inode, owner and mode: not atomic, but what a user who may
// write the file and not its directory can do.
func writeInPlace(ctx context.Context, r io.Reader, target string) (int64, error) {
	dst, err := os.OpenFile(target, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, err
	}
	fi, err := dst.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: target, Err: ErrNotRegular}
	}
	if err == nil {
		err = dst.Truncate(0)
	}
	var n int64
	if err == nil {
		n, err = io.Copy(dst, ctxReader{ctx, r})
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// ownedOrErr reports a failure to set the owner of a file already in place.
func ownedOrErr(target string, ownErr error) error {
	if ownErr != nil {
		return &chownError{path: target, err: ownErr}
	}
	return nil
}
