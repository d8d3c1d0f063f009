package files

import (
	"bytes"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/wlynxg/chardet"
)

// binarySampleSize is how much of a file the binary check looks at.
const binarySampleSize = 1024

// IsBinary reports whether the file at path looks binary, with the rules of
// the binaryornot package that OpenHands uses: ".pyc" files always are;
// otherwise the first 1024 bytes are judged by their share of control and
// high bytes, whether a charset detector can decode them, and NUL or 0xFF
// bytes. A missing or unreadable file (or a directory) is not binary.
func IsBinary(path string) bool {
	if strings.HasSuffix(path, ".pyc") {
		return true
	}
	// O_NONBLOCK: opening a FIFO must not wait for a writer; only a
	// regular file is then read.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	buf := make([]byte, binarySampleSize)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return false
	}
	return isBinaryBytes(buf[:n])
}

// isBinaryBytes judges a sample of a file's first bytes.
func isBinaryBytes(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	var low, high int // bytes outside printable ASCII; bytes outside 127..255
	for _, c := range b {
		printable := (c >= 32 && c < 127) || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\b'
		if !printable {
			low++
		}
		if c < 127 {
			high++
		}
	}
	ratio1 := float64(low) / float64(len(b))
	ratio2 := float64(high) / float64(len(b))
	likelyBinary := (ratio1 > 0.3 && ratio2 < 0.05) || (ratio1 > 0.8 && ratio2 > 0.8)

	decodable := false
	if r := chardet.Detect(b); r.Confidence > 0.9 && !strings.Contains(strings.ToLower(r.Encoding), "ascii") {
		if c, ok := codecByName(r.Encoding); ok {
			decodable = c.roundTrips(b)
		}
	}
	if likelyBinary {
		return !decodable
	}
	if decodable {
		return false
	}
	return bytes.IndexByte(b, 0x00) >= 0 || bytes.IndexByte(b, 0xff) >= 0
}
