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

	"github.com/actionserver/actionserver/internal/chown"
)

// ErrUnsafeZipEntry marks a zip entry that would be written outside the
// extraction directory, or through a symlink: an absolute name, a ".."
// escape, a symlink pointing out, or an entry under a symlink.
var ErrUnsafeZipEntry = errors.New("zip entry would land outside the destination")

// ErrZipTooLarge marks an archive that would unpack to more than the limits
// allow (a zip bomb): see ExtractZip.
var ErrZipTooLarge = errors.New("zip archive unpacks to more than allowed")

// Limits on what one archive may unpack to. Deflate compresses at most
// about 1000:1, and source trees, the usual upload, 3 to 10:1; small
// archives may be as repetitive as they like up to zipRatioFloor.
const (
	// MaxZipTotal is the most bytes one archive may unpack to.
	MaxZipTotal = 16 << 30
	// MaxZipRatio is the most bytes an archive may unpack to per byte of
	// its own size, above zipRatioFloor.
	MaxZipRatio = 200
	// MaxZipEntries is the most entries one archive may hold.
	MaxZipEntries = 1 << 20
	zipRatioFloor = 256 << 20
)

// zipAllowance is the most an archive of size bytes may unpack to.
func zipAllowance(size int64) uint64 {
	return min(MaxZipTotal, max(zipRatioFloor, uint64(size)*MaxZipRatio))
}

// maxZipLinkTarget bounds the size of a symlink entry's target.
const maxZipLinkTarget = 4096

// zipItem is one checked entry of an archive: its cleaned relative name
// and, for a symlink, its target.
type zipItem struct {
	f      *zip.File
	name   string
	target string // non-empty for a symlink
}

// ExtractZip unpacks the zip file at zipPath into the directory dest, giving
// everything it creates to owner. Every entry is checked before anything is
// written, and if one is unsafe the whole archive is refused with
// ErrUnsafeZipEntry: an absolute name or a ".." escape; a symlink whose
// target, read from the link's own directory, leaves dest; any entry whose
// path passes through a symlink, whether the archive makes it or it is
// already in dest. Writing then walks dest one directory at a time without
// following symlinks, so a link swapped in meanwhile fails the write instead
// of redirecting it. A symlink already in dest may still point anywhere (it
// is the agent's own); the archive only cannot write through it. Entries are
// streamed to disk, so memory stays small whatever the archive's size.
//
// An archive that would unpack to more than MaxZipTotal bytes, or to more
// than MaxZipRatio times its own size (beyond a floor of 256 MiB), or that
// holds more than MaxZipEntries entries, is refused with ErrZipTooLarge
// before anything is written. The sizes the archive declares are the ones
// checked: the zip reader fails an entry whose data runs past its declared
// size, and the bytes written are counted again as they go.
func ExtractZip(ctx context.Context, zipPath, dest string, owner chown.Owner) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return fmt.Errorf("open zip %s: %w", zipPath, err)
	}
	defer zr.Close()

	fi, err := os.Stat(zipPath)
	if err != nil {
		return fmt.Errorf("open zip %s: %w", zipPath, err)
	}
	allowed := zipAllowance(fi.Size())
	if len(zr.File) > MaxZipEntries {
		return fmt.Errorf("%w: %d entries, at most %d", ErrZipTooLarge, len(zr.File), MaxZipEntries)
	}
	var declared uint64
	for _, f := range zr.File {
		declared += f.UncompressedSize64
		if declared > allowed || declared < f.UncompressedSize64 {
			return fmt.Errorf("%w: more than %d bytes from an archive of %d", ErrZipTooLarge, allowed, fi.Size())
		}
	}
	entries, err := checkZipEntries(zr.File)
	if err != nil {
		return err
	}
	fd, err := unix.Open(dest, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("extract zip: %w", &fs.PathError{Op: "open", Path: dest, Err: err})
	}
	defer unix.Close(fd)
	x := extractor{root: fd, owner: owner, budget: int64(min(allowed, 1<<62))}
	for _, e := range entries {
		if err := x.check(e); err != nil {
			return err
		}
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case e.f.FileInfo().IsDir():
			err = x.mkdir(e.name)
		case e.target != "":
			err = x.symlink(e.name, e.target)
		default:
			err = x.file(ctx, e.f, e.name)
		}
		if err != nil {
			return fmt.Errorf("extract %q to %s: %w", e.f.Name, dest, err)
		}
	}
	return nil
}

// checkZipEntries cleans every name and refuses the archive if an entry
// would leave the destination on its own or through a symlink the archive
// makes. The root entry itself is dropped.
func checkZipEntries(files []*zip.File) ([]zipItem, error) {
	entries := make([]zipItem, 0, len(files))
	links := map[string]bool{}
	for _, f := range files {
		name, err := safeEntryName(f.Name)
		if err != nil {
			return nil, err
		}
		if name == "" {
			continue
		}
		e := zipItem{f: f, name: name}
		if f.Mode()&fs.ModeSymlink != 0 {
			if e.target, err = readLinkEntry(f); err != nil {
				return nil, err
			}
			if !safeLinkTarget(name, e.target) {
				return nil, fmt.Errorf("%w: %q is a symlink to %q", ErrUnsafeZipEntry, f.Name, e.target)
			}
			links[name] = true
		}
		entries = append(entries, e)
	}
	// Checked against all links, wherever they are listed: a link made
	// after the entries under it would not redirect them, but one made
	// before would, and order is the archive's choice.
	for _, e := range entries {
		for dir := path.Dir(e.name); dir != "."; dir = path.Dir(dir) {
			if links[dir] {
				return nil, fmt.Errorf("%w: %q is under the symlink %q", ErrUnsafeZipEntry, e.f.Name, dir)
			}
		}
		if e.target == "" && links[e.name] {
			return nil, fmt.Errorf("%w: %q is also a symlink", ErrUnsafeZipEntry, e.f.Name)
		}
	}
	return entries, nil
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

// safeLinkTarget reports whether a symlink at name pointing to target stays
// inside the destination. The kernel resolves ".." physically: after a
// component that is itself a symlink it climbs from where that link points,
// not from where its name is. So ".." may only lead the target, where it
// climbs the real directories the link sits in (entries never pass through
// symlinks), and the lexical result must stay inside.
func safeLinkTarget(name, target string) bool {
	if path.IsAbs(target) || strings.ContainsRune(target, 0) {
		return false
	}
	descended := false
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "", ".":
		case "..":
			if descended {
				return false
			}
		default:
			descended = true
		}
	}
	return local(path.Join(path.Dir(name), target))
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

// extractor writes checked entries under the directory open as root. Every
// path is walked from root one component at a time with O_NOFOLLOW, so no
// write passes through a symlink, even one made after the checks.
type extractor struct {
	root  int
	owner chown.Owner
	// budget is how many more bytes the archive may write.
	budget int64
}

// check refuses an entry that would pass through a symlink already in the
// destination: one of its parent directories, or, unless the entry is a
// symlink that replaces it, its own name.
func (x extractor) check(e zipItem) error {
	dir, base := path.Split(e.name)
	fd, err := x.openDir(strings.TrimSuffix(dir, "/"), false)
	if err != nil {
		return fmt.Errorf("extract %q: %w", e.f.Name, err)
	}
	if fd < 0 || e.target != "" {
		return nil // missing parents are created as real directories
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return fmt.Errorf("%w: %q would be written through an existing symlink", ErrUnsafeZipEntry, e.f.Name)
	}
	return nil
}

// openDir opens the directory dir ("" or "." for the root) below the root,
// refusing any component that is a symlink. With create it makes the missing
// ones, giving them to the owner; without, a missing one gives -1 and no
// error. The caller closes the descriptor.
func (x extractor) openDir(dir string, create bool) (int, error) {
	fd, err := unix.Openat(x.root, ".", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open destination: %w", err)
	}
	if dir == "" || dir == "." {
		return fd, nil
	}
	cur := ""
	for _, c := range strings.Split(dir, "/") {
		cur = path.Join(cur, c)
		made := false
		if create {
			err := unix.Mkdirat(fd, c, 0o755)
			if err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, &fs.PathError{Op: "mkdir", Path: cur, Err: err}
			}
			made = err == nil
		}
		next, err := unix.Openat(fd, c, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			err = dirError(fd, c, cur, err)
			unix.Close(fd)
			if !create && errors.Is(err, fs.ErrNotExist) {
				return -1, nil
			}
			return -1, err
		}
		unix.Close(fd)
		fd = next
		if made && !x.owner.IsKeep() {
			if err := unix.Fchown(fd, x.owner.UID(), x.owner.GID()); err != nil {
				unix.Close(fd)
				return -1, &fs.PathError{Op: "chown", Path: cur, Err: err}
			}
		}
	}
	return fd, nil
}

// dirError explains why the component c of dir (cur so far) did not open as
// a directory: O_NOFOLLOW with O_DIRECTORY reports a symlink as ENOTDIR.
func dirError(dirfd int, c, cur string, err error) error {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, c, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return fmt.Errorf("%w: %s is a symlink", ErrUnsafeZipEntry, cur)
	}
	return &fs.PathError{Op: "open", Path: cur, Err: err}
}

func (x extractor) mkdir(dir string) error {
	fd, err := x.openDir(dir, true)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

func (x *extractor) file(ctx context.Context, zf *zip.File, name string) error {
	dir, base := path.Split(name)
	dfd, err := x.openDir(strings.TrimSuffix(dir, "/"), true)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	mode := uint32(0o644)
	if zf.Mode()&0o111 != 0 {
		mode = 0o755
	}
	rc, err := zf.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	// O_NONBLOCK so a FIFO of that name fails the open instead of waiting
	// for a reader; the type check below refuses anything not regular.
	fd, err := unix.Openat(dfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, mode)
	if errors.Is(err, unix.ELOOP) {
		return fmt.Errorf("%w: %s is a symlink", ErrUnsafeZipEntry, name)
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	out := os.NewFile(uintptr(fd), name)
	fi, err := out.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s exists and is not a regular file", name)
	}
	if err == nil {
		var n int64
		n, err = io.Copy(out, io.LimitReader(ctxReader{ctx, rc}, x.budget+1))
		x.budget -= n
		if err == nil && x.budget < 0 {
			err = ErrZipTooLarge
		}
	}
	if err == nil && !x.owner.IsKeep() {
		err = out.Chown(x.owner.UID(), x.owner.GID())
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// symlink creates name -> target, replacing what was at name unless it is a
// directory.
func (x extractor) symlink(name, target string) error {
	dir, base := path.Split(name)
	fd, err := x.openDir(strings.TrimSuffix(dir, "/"), true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Unlinkat(fd, base, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("replace %s: %w", name, err)
	}
	if err := unix.Symlinkat(target, fd, base); err != nil {
		return fmt.Errorf("symlink %s: %w", name, err)
	}
	if x.owner.IsKeep() {
		return nil
	}
	return unix.Fchownat(fd, base, x.owner.UID(), x.owner.GID(), unix.AT_SYMLINK_NOFOLLOW)
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
// point to, symlinked directories not followed (except the root itself,
// which may be a link to a directory). A root that is a regular
// file gives an empty zip; a missing root is an error wrapping
// fs.ErrNotExist. Nothing is buffered beyond the copy buffer.
func WriteZip(ctx context.Context, w io.Writer, root string) error {
	fi, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("zip %s: %w", root, err)
	}
	zw := zip.NewWriter(w)
	if fi.IsDir() {
		// A root that is a symlink to a directory is followed, as
		// upstream's os.walk follows it; links below it are not.
		if root, err = filepath.EvalSymlinks(root); err != nil {
			return fmt.Errorf("zip %s: %w", root, err)
		}
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
