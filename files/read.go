package files

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// Read implements the "read" action with impl_source "default". path is
// resolved against cwd (see Resolve). Images (.png .jpg .jpeg .bmp .gif),
// PDFs and videos (.mp4 .webm .ogg) come back whole as a
// "data:<mime>;base64,..." URL. Other files must be UTF-8 text and are sliced
// by line: start and end are 0-based, end exclusive, end -1 meaning "to the
// end"; an explicit range always yields at least one line.
//
// The agent-facing failures are *Error values whose message is the error
// observation's content: a missing file, a directory, a binary file
// (BinaryFileMessage), text that is not UTF-8. Other errors, such as
// permission denied, are server faults.
func Read(cwd, path string, start, end int) (string, error) {
	abs := Resolve(cwd, path)
	if mime, ok := mediaTypes[strings.ToLower(filepath.Ext(abs))]; ok {
		data, err := readRegular(cwd, abs)
		if err != nil {
			return "", err
		}
		return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data), nil
	}
	if IsBinary(abs) {
		return "", &Error{Msg: BinaryFileMessage}
	}
	data, err := readRegular(cwd, abs)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(data) {
		return "", errorf(nil, "File could not be decoded as utf-8: %s.", abs)
	}
	lines := splitLinesKeepEnds(universalNewlines(string(data)))
	return strings.Join(sliceReadLines(lines, start, end), ""), nil
}

// readRegular reads the whole file at abs, turning "missing" and "is a
// directory" into the agent-facing messages.
func readRegular(cwd, abs string) ([]byte, error) {
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
		// A FIFO or device could block forever or never end.
		return nil, fmt.Errorf("read %s: not a regular file", abs)
	}
	data, err := os.ReadFile(abs)
	switch {
	case err == nil:
		return data, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, errorf(err, "File not found: %s. Your current working directory is %s.", abs, cwd)
	case errors.Is(err, syscallEISDIR):
		return nil, errorf(err, "Path is a directory: %s. You can only read files", abs)
	}
	return nil, fmt.Errorf("read %s: %w", abs, err)
}

// sliceReadLines selects the lines of a ranged read. The arithmetic follows
// OpenHands' read_lines exactly, clamps included, because agents compute
// ranges against it.
func sliceReadLines(lines []string, start, end int) []string {
	n := len(lines)
	start = min(max(start, 0), n)
	if end != -1 {
		end = min(max(end, 0), n)
	}
	if end == -1 {
		return lines[start:]
	}
	begin := max(0, min(start, n-2))
	end = max(begin+1, end)
	if end > n {
		end = n
	}
	if begin > n {
		begin = n
	}
	return lines[begin:end]
}
