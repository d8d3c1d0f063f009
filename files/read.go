package files

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"
)

// BinaryFileMessage is the error text for reading a file that looks binary;
// the OpenHands host looks for it to answer "unsupported media type".
const BinaryFileMessage = "ERROR_BINARY_FILE"

// Resolve returns the absolute path a read or write of path acts on: path
// itself if absolute, else path joined onto cwd (the shell's current
// directory), normalised as Python's pathlib prints it ("//" and "." removed,
// ".." kept).
func Resolve(cwd, path string) string {
	if !strings.HasPrefix(path, "/") {
		path = cwd + "/" + path
	}
	return pyPath(path)
}

// mediaTypes are the extensions Read returns as data: URLs, with their MIME
// types.
var mediaTypes = map[string]string{
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".bmp":  "image/bmp",
	".gif":  "image/gif",
	".pdf":  "application/pdf",
	".mp4":  "video/mp4",
	".webm": "video/webm",
	".ogg":  "audio/ogg",
}

// MaxReadSize is the largest file Read returns whole, and the most text a
// ranged read of a larger file returns: the editor's limit. Without it a
// read of a file of hundreds of megabytes held several copies of it.
const MaxReadSize = DefaultMaxFileSize

// Read implements the "read" action with impl_source "default". path is
// resolved against cwd (see Resolve). Images (.png .jpg .jpeg .bmp .gif),
// PDFs and videos (.mp4 .webm .ogg) come back whole as a
// "data:<mime>;base64,..." URL. Other files must be UTF-8 text and are sliced
// by line: start and end are 0-based, end exclusive, end -1 meaning "to the
// end"; an explicit range always yields at least one line.
//
// A file over MaxReadSize is not read whole: a media file, or a text file
// read without a range, is an *Error that says how to read a range; a range
// of a larger text file is streamed, and must itself stay within
// MaxReadSize. Only the selected lines of such a file are checked to be
// UTF-8.
//
// The agent-facing failures are *Error values whose message is the error
// observation's content: a missing file, a directory, a binary file
// (BinaryFileMessage), text that is not UTF-8, a file that is not a regular
// one (a FIFO, a device), a file too large. Other errors, such as permission
// denied, are server faults. ctx ends a streamed read.
func Read(ctx context.Context, cwd, path string, start, end int) (string, error) {
	abs := Resolve(cwd, path)
	if mime, ok := mediaTypes[strings.ToLower(filepath.Ext(abs))]; ok {
		f, size, err := openRegular(cwd, abs)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if size > MaxReadSize {
			return "", tooLargeToRead(abs, size, false)
		}
		data, err := readAtMost(f, MaxReadSize)
		if err != nil {
			return "", tooLargeOr(abs, err)
		}
		return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data), nil
	}
	if IsBinary(abs) {
		return "", &Error{Msg: BinaryFileMessage}
	}
	f, size, err := openRegular(cwd, abs)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if size > MaxReadSize {
		if start == 0 && end == -1 {
			return "", tooLargeToRead(abs, size, true)
		}
		return readLargeRange(ctx, f, abs, size, start, end)
	}
	data, err := readAtMost(f, MaxReadSize)
	if err != nil {
		return "", tooLargeOr(abs, err)
	}
	if !utf8.Valid(data) {
		return "", errorf(nil, "File could not be decoded as utf-8: %s.", abs)
	}
	lines := splitLinesKeepEnds(universalNewlines(string(data)))
	return strings.Join(sliceReadLines(lines, start, end), ""), nil
}

// errTooLarge is a file that grew past the limit while it was read.
var errTooLarge = errors.New("file too large")

// readAtMost reads f to its end, failing with errTooLarge past limit bytes.
func readAtMost(f *os.File, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = errTooLarge
	}
	return data, err
}

func tooLargeOr(abs string, err error) error {
	if errors.Is(err, errTooLarge) {
		return tooLargeToRead(abs, MaxReadSize+1, false)
	}
	return fmt.Errorf("read %s: %w", abs, err)
}

// tooLargeToRead is the observation for a file too large to return whole.
func tooLargeToRead(abs string, size int64, text bool) *Error {
	msg := fmt.Sprintf("File is too large to read whole: %s (%.1fMB). Maximum allowed size is %dMB.",
		abs, float64(size)/1024/1024, MaxReadSize/1024/1024)
	if text {
		msg += fmt.Sprintf(" Read a range of lines instead: set start and end (0-based line numbers, end exclusive), at most %dMB of text at a time.", MaxReadSize/1024/1024)
	} else {
		msg += " Use a command in the shell to inspect it."
	}
	return &Error{Msg: msg}
}

// openRegular opens abs for reading and returns it with its size, turning
// "missing" and "is a directory" into the agent-facing messages and
// refusing anything but a regular file. The open does not block on a FIFO
// (O_NONBLOCK), and the type is checked on the opened file, so a file
// swapped in after a check cannot make the read wait.
func openRegular(cwd, abs string) (*os.File, int64, error) {
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0, errorf(err, "File not found: %s. Your current working directory is %s.", abs, cwd)
	case err != nil:
		return nil, 0, fmt.Errorf("read %s: %w", abs, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("read %s: %w", abs, err)
	}
	switch {
	case fi.IsDir():
		f.Close()
		return nil, 0, errorf(nil, "Path is a directory: %s. You can only read files", abs)
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, 0, errorf(nil, "Path is not a regular file: %s. You can only read files", abs)
	}
	return f, fi.Size(), nil
}

// readLargeRange returns lines [start, end) of a file too large to hold,
// with the arithmetic of sliceReadLines: one pass counts the lines, a
// second collects the selected ones.
func readLargeRange(ctx context.Context, f *os.File, abs string, size int64, start, end int) (string, error) {
	n := 0
	if err := eachLine(ctx, f, func(_ []byte, ends bool) bool {
		if ends {
			n++
		}
		return true
	}); err != nil {
		return "", fmt.Errorf("read %s: %w", abs, err)
	}
	lo, hi := readRange(n, start, end)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("read %s: %w", abs, err)
	}
	var b strings.Builder
	line, over := 0, false
	err := eachLine(ctx, f, func(part []byte, ends bool) bool {
		if line >= hi {
			return false
		}
		if line >= lo {
			if int64(b.Len()+len(part)) > MaxReadSize {
				over = true
				return false
			}
			b.Write(part)
		}
		if ends {
			line++
		}
		return true
	})
	if err != nil {
		return "", fmt.Errorf("read %s: %w", abs, err)
	}
	if over {
		return "", tooLargeToRead(abs, size, true)
	}
	if !utf8.ValidString(b.String()) {
		return "", errorf(nil, "File could not be decoded as utf-8: %s.", abs)
	}
	return b.String(), nil
}

// lineChunk is how much of a file eachLine reads at a time.
const lineChunk = 256 << 10

// eachLine streams r as Python's universal-newline text mode reads it:
// "\r\n" and a lone "\r" become "\n". fn gets the pieces of each line in
// order, ends telling whether the piece finishes its line (a last line
// without a newline ends at EOF, with an empty piece); it returns false to
// stop. fn must not keep part.
func eachLine(ctx context.Context, r io.Reader, fn func(part []byte, ends bool) bool) error {
	buf := make([]byte, lineChunk)
	pending := false // part of an unfinished line was passed on
	prevCR := false  // the last chunk ended in "\r"
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		k, err := r.Read(buf)
		chunk := buf[:k]
		if k > 0 {
			if prevCR && chunk[0] == '\n' {
				chunk = chunk[1:] // the "\n" of a "\r\n" split between reads
			}
			prevCR = false
		}
		for len(chunk) > 0 {
			i := bytes.IndexAny(chunk, "\r\n")
			if i < 0 {
				if !fn(chunk, false) {
					return nil
				}
				pending = true
				break
			}
			cr := chunk[i] == '\r'
			chunk[i] = '\n'
			if !fn(chunk[:i+1], true) {
				return nil
			}
			pending = false
			chunk = chunk[i+1:]
			if cr {
				if len(chunk) == 0 {
					prevCR = true
				} else if chunk[0] == '\n' {
					chunk = chunk[1:]
				}
			}
		}
		if errors.Is(err, io.EOF) {
			if pending {
				fn(nil, true)
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// sliceReadLines selects the lines of a ranged read. The arithmetic follows
// OpenHands' read_lines exactly, clamps included, because agents compute
// ranges against it.
func sliceReadLines(lines []string, start, end int) []string {
	lo, hi := readRange(len(lines), start, end)
	return lines[lo:hi]
}

// readRange is sliceReadLines on indexes: the lines [lo, hi) of n.
func readRange(n, start, end int) (lo, hi int) {
	start = min(max(start, 0), n)
	if end != -1 {
		end = min(max(end, 0), n)
	}
	if end == -1 {
		return start, n
	}
	begin := max(0, min(start, n-2))
	end = max(begin+1, end)
	if end > n {
		end = n
	}
	if begin > n {
		begin = n
	}
	return begin, end
}
