package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
)

// partSuffix names the file a resumable copy writes before it is complete.
const partSuffix = ".part"

func (a *app) cpCmd() *cobra.Command {
	var resume bool
	c := &cobra.Command{
		Use:   "cp SRC DEST",
		Short: "Copy one file's bytes into or out of the sandbox (a sandbox path starts with ':')",
		Long: `Copies one file, as bytes, between this machine and the sandbox. The
sandbox side is written ":PATH": absolute, or relative to the workspace.
A DEST that is a directory, or ends in "/", receives the file under its
own name. The copy lands under DEST only once complete.

With --resume the bytes go to DEST.part first, and a copy that stopped
midway continues from what DEST.part holds: on the sandbox side too, where
the part is appended to in place and renamed once complete.`,
		Example: `  actionctl cp ./data.bin :/workspace/data.bin
  actionctl cp --resume :out/model.bin ./model.bin`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, dst := args[0], args[1]
			srcRemote, dstRemote := strings.HasPrefix(src, ":"), strings.HasPrefix(dst, ":")
			if srcRemote == dstRemote {
				return &usageError{errors.New("exactly one of SRC and DEST must be a sandbox path (:PATH)")}
			}
			var n int64
			var err error
			if dstRemote {
				n, err = a.cpUp(cmd, src, strings.TrimPrefix(dst, ":"), resume)
			} else {
				n, err = a.cpDown(cmd, strings.TrimPrefix(src, ":"), dst, resume)
			}
			if err != nil {
				return err
			}
			return a.printOK(map[string]any{"source": src, "destination": dst, "bytes": n})
		},
	}
	c.Flags().BoolVar(&resume, "resume", false, "continue a copy that stopped midway (through DEST.part)")
	return c
}

// cpDown copies the sandbox file src to the local dst.
func (a *app) cpDown(cmd *cobra.Command, src, dst string, resume bool) (int64, error) {
	if fi, err := os.Stat(dst); (err == nil && fi.IsDir()) || strings.HasSuffix(dst, "/") {
		dst = filepath.Join(dst, filepath.Base(src))
	}
	part := dst + partSuffix
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	var off int64
	if resume {
		if fi, err := os.Stat(part); err == nil {
			off, flags = fi.Size(), os.O_WRONLY|os.O_CREATE|os.O_APPEND
		}
	}
	ctx := cmd.Context()
	r, err := a.client().OpenFile(ctx, src, off)
	var ce *client.Error
	if errors.As(err, &ce) && ce.Code == api.CodeRangeUnsatisfied {
		// The part is as long as the file, or longer: start again.
		off, flags = 0, os.O_WRONLY|os.O_CREATE|os.O_TRUNC
		r, err = a.client().OpenFile(ctx, src, 0)
	}
	if err != nil {
		return 0, err
	}
	defer r.Close()
	f, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	p := a.newProgress("cp "+filepath.Base(src), r.Size)
	n, err := io.Copy(f, &countingReader{r: r, n: off, report: p.update})
	p.done(err)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		if !resume {
			os.Remove(part)
		}
		return n, fmt.Errorf("copy %s: %w", src, err)
	}
	if r.Size >= 0 && off+n != r.Size {
		return n, fmt.Errorf("copy %s: got %d of %d bytes", src, off+n, r.Size)
	}
	return off + n, os.Rename(part, dst)
}

// cpUp copies the local file src to the sandbox path dst.
func (a *app) cpUp(cmd *cobra.Command, src, dst string, resume bool) (int64, error) {
	f, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("cp %s: not a regular file", src)
	}
	ctx := cmd.Context()
	cl := a.client()
	if strings.HasSuffix(dst, "/") {
		dst += filepath.Base(src)
	} else if info, err := cl.StatFile(ctx, dst); err == nil && info.Type == api.FileTypeDir {
		dst = strings.TrimSuffix(dst, "/") + "/" + filepath.Base(src)
	}
	opts := client.WriteFileOptions{Mode: fmt.Sprintf("%04o", fi.Mode().Perm())}
	target := dst
	var off int64
	if resume {
		target = dst + partSuffix
		if info, err := cl.StatFile(ctx, target); err == nil && info.Type == api.FileTypeFile && info.Size <= fi.Size() {
			off = info.Size
		}
		if off > 0 {
			if _, err := f.Seek(off, io.SeekStart); err != nil {
				return 0, err
			}
			opts.Offset = &off
		}
	}
	opts.Size = fi.Size() - off
	p := a.newProgress("cp "+filepath.Base(src), fi.Size())
	w, err := cl.WriteFile(ctx, target, &countingReader{r: f, n: off, report: p.update}, opts)
	p.done(err)
	if err != nil {
		return 0, err
	}
	if resume {
		if err := cl.Move(ctx, target, dst, true); err != nil {
			return 0, err
		}
	}
	return w.Size, nil
}

// countingReader reports the bytes read so far, from n.
type countingReader struct {
	r      io.Reader
	n      int64
	report func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	c.report(c.n)
	return k, err
}
