package swerex

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/actionserver/actionserver/executor"
)

// read_file, write_file and upload, as upstream's Path.read_text,
// Path.write_text and its upload route do them, with a bound on what is
// read into memory.

// readFile reads a text file as Path(path).read_text(encoding, errors).
func readFile(path, encoding, errs string, limit int64) (string, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return "", newException(classValueError, "embedded null byte")
	}
	f, err := os.Open(path)
	if err != nil {
		return "", osError(err, path)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return "", osError(syscall.EISDIR, path)
	}
	// A device or /proc file reports no size: read up to the bound.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", osError(err, path)
	}
	if int64(len(b)) > limit {
		return "", osError(syscall.EFBIG, path)
	}
	return decodeText(b, encoding, errs)
}

// writeFile writes content as Path(path).write_text after creating the
// parent directories.
func writeFile(path, content string) error {
	if strings.IndexByte(path, 0) >= 0 {
		return newException(classValueError, "embedded null byte")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return osError(err, filepath.Dir(path))
	}
	if err := os.WriteFile(path, []byte(content), 0o666); err != nil {
		return osError(err, path)
	}
	return nil
}

// upload stores an uploaded file at target, or unpacks an uploaded zip
// archive into the directory target. The file is streamed, never held in
// memory; a half-written file is never left at target.
func upload(ctx context.Context, e *executor.Executor, file multipart.File, target string, unzip bool) error {
	if strings.IndexByte(target, 0) >= 0 {
		return newException(classValueError, "embedded null byte")
	}
	if !filepath.IsAbs(target) {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("working directory: %w", err)
		}
		target = filepath.Join(wd, target)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o777); err != nil {
		return osError(err, filepath.Dir(target))
	}
	if unzip {
		// The executor unpacks archives for the native API; it refuses
		// entries that would land outside target.
		if err := e.Upload(ctx, "upload.zip", file, target, true); err != nil {
			return &Exception{ClassPath: classOSError, Message: fmt.Sprintf("cannot unpack the archive into %s: %v", target, err)}
		}
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), ".upload-*")
	if err != nil {
		return osError(err, target)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, file); err != nil {
		tmp.Close()
		return osError(err, target)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return osError(err, target)
	}
	if err := tmp.Close(); err != nil {
		return osError(err, target)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return osError(err, target)
	}
	return nil
}
