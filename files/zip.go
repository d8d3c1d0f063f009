package files

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrUnsafeZipEntry marks a zip entry that would be written outside the
// extraction directory: an absolute name, a ".." escape, or a symlink
// pointing out.
var ErrUnsafeZipEntry = errors.New("zip entry would land outside the destination")

// maxZipLinkTarget bounds the size of a symlink entry's target.
const maxZipLinkTarget = 4096

// ExtractZip unpacks the zip file at zipPath into the directory dest, giving
// everything it creates to owner. Every entry is checked before anything is
// written: if one would land outside dest (absolute name, "..", a symlink
// entry pointing out) the whole archive is refused with ErrUnsafeZipEntry.
// Writing goes through an os.Root on dest, so a symlink already inside dest
// that points out cannot redirect a write either. Entries are streamed to
// disk, so memory stays small whatever the archive's size.
func ExtractZip(ctx context.Context, zipPath, dest string, owner Owner) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return fmt.Errorf("open zip %s: %w", zipPath, err)
	}
	defer zr.Close()

	links := map[*zip.File]string{}
	for _, f := range zr.File {
		name, err := safeEntryName(f.Name)
		if err != nil {
			return err
		}
		if f.Mode()&fs.ModeSymlink != 0 {
			target, err := readLinkEntry(f)
			if err != nil {
				return err
			}
			if path.IsAbs(target) || !local(path.Join(path.Dir(name), target)) {
				return fmt.Errorf("%w: %q is a symlink to %q", ErrUnsafeZipEntry, f.Name, target)
			}
			links[f] = target
		}
	}

	root, err := os.OpenRoot(dest)
	if err != nil {
		return fmt.Errorf("open destination %s: %w", dest, err)
	}
	defer root.Close()
	x := extractor{root: root, owner: owner}
	for _, f := range zr.File {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, _ := safeEntryName(f.Name)
		if name == "" {
			continue
		}
		switch {
		case f.FileInfo().IsDir():
			err = x.mkdirAll(name)
		case links[f] != "":
			err = x.symlink(name, links[f])
		default:
			err = x.file(ctx, f, name)
		}
		if err != nil {
			return fmt.Errorf("extract %q to %s: %w", f.Name, dest, err)
		}
	}
	return nil
}

// safeEntryName cleans a zip entry name to a relative slash path ("" for the
// root itself) or refuses it.
func safeEntryName(name string) (string, error) {
	if strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) || filepath.VolumeName(name) != "" {
		return "", fmt.Errorf("%w: %q", ErrUnsafeZipEntry, name)
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", nil
	}
	if !local(clean) {
		return "", fmt.Errorf("%w: %q", ErrUnsafeZipEntry, name)
	}
	return clean, nil
}

// local reports whether the cleaned relative path p stays inside its root.
func local(p string) bool {
	p = path.Clean(p)
	return p != ".." && !strings.HasPrefix(p, "../") && !path.IsAbs(p)
}

func readLinkEntry(f *zip.File) (string, error) {
	rc, err := f.Open()
	if err != nil {
		return "", fmt.Errorf("read zip entry %q: %w", f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxZipLinkTarget+1))
	if err != nil {
		return "", fmt.Errorf("read zip entry %q: %w", f.Name, err)
	}
	if len(b) > maxZipLinkTarget || len(b) == 0 {
		return "", fmt.Errorf("%w: %q has an invalid symlink target", ErrUnsafeZipEntry, f.Name)
	}
	return string(b), nil
}

type extractor struct {
	root  *os.Root
	owner Owner
}

// mkdirAll creates dir and its parents inside the root, giving new ones to
// the owner.
func (x extractor) mkdirAll(dir string) error {
	cur := ""
	for _, c := range strings.Split(dir, "/") {
		cur = path.Join(cur, c)
		err := x.root.Mkdir(cur, 0o755)
		if errors.Is(err, fs.ErrExist) {
			fi, err := x.root.Stat(cur)
			if err != nil {
				return err
			}
			if !fi.IsDir() {
				return fmt.Errorf("%s exists and is not a directory", cur)
			}
			continue
		}
		if err != nil {
			return err
		}
		if err := x.chown(cur); err != nil {
			return err
		}
	}
	return nil
}

func (x extractor) chown(name string) error {
	if x.owner.isKeep() {
		return nil
	}
	f, err := x.root.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Chown(x.owner.UID, x.owner.GID)
}

func (x extractor) file(ctx context.Context, zf *zip.File, name string) error {
	if dir := path.Dir(name); dir != "." {
		if err := x.mkdirAll(dir); err != nil {
			return err
		}
	}
	mode := fs.FileMode(0o644)
	if zf.Mode()&0o111 != 0 {
		mode = 0o755
	}
	rc, err := zf.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, ctxReader{ctx, rc}); err != nil {
		out.Close()
		return err
	}
	if !x.owner.isKeep() {
		if err := out.Chown(x.owner.UID, x.owner.GID); err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}

// symlink creates name -> target. The parent is opened through the root and
// the link made relative to that descriptor, so the link lands inside the
// root even if a path component is swapped meanwhile.
func (x extractor) symlink(name, target string) error {
	dir, base := path.Split(name)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	} else if err := x.mkdirAll(dir); err != nil {
		return err
	}
	d, err := x.root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	fd := int(d.Fd())
	if err := unix.Unlinkat(fd, base, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("replace %s: %w", name, err)
	}
	if err := unix.Symlinkat(target, fd, base); err != nil {
		return fmt.Errorf("symlink %s: %w", name, err)
	}
	if x.owner.isKeep() {
		return nil
	}
	return unix.Fchownat(fd, base, x.owner.UID, x.owner.GID, unix.AT_SYMLINK_NOFOLLOW)
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// WriteZip streams a zip of the regular files under root to w, the layout
// of the download_files endpoint: names relative to root, directories not
// stored (so empty ones vanish), symlinks to files stored as the file they
// point to, symlinked directories not followed. A root that is a regular
// file gives an empty zip; a missing root is an error wrapping
// fs.ErrNotExist. Nothing is buffered beyond the copy buffer.
func WriteZip(ctx context.Context, w io.Writer, root string) error {
	fi, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("zip %s: %w", root, err)
	}
	zw := zip.NewWriter(w)
	if fi.IsDir() {
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				// An unreadable directory is skipped, as os.walk does.
				if d != nil && d.IsDir() && p != root {
					return fs.SkipDir
				}
				return nil
			}
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if d.IsDir() {
				return nil
			}
			return addZipFile(ctx, zw, root, p)
		})
		if err != nil {
			return fmt.Errorf("zip %s: %w", root, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("zip %s: %w", root, err)
	}
	return nil
}

func addZipFile(ctx context.Context, zw *zip.Writer, root, p string) error {
	fi, err := os.Stat(p) // follows symlinks
	if err != nil || !fi.Mode().IsRegular() {
		return nil // broken links, sockets, FIFOs, linked directories
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	hdr, err := zip.FileInfoHeader(fi)
	if err != nil {
		return err
	}
	hdr.Name = filepath.ToSlash(rel)
	// Stored, as upstream's ZipFile writes by default: the host unpacks
	// the archive at once, and deflate would cap a transfer at the speed of
	// one core compressing.
	hdr.Method = zip.Store
	zf, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	_, err = io.Copy(zf, ctxReader{ctx, f})
	return err
}
