package files

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wlynxg/chardet"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// detectSampleSize bounds how much of a file the charset detector reads.
const detectSampleSize = 1 << 20

// minDetectConfidence is the detector confidence below which a file that is
// not UTF-8 is read as Latin-1 instead.
const minDetectConfidence = 0.5

// codec decodes a file's bytes to text and encodes text back. The zero value
// is UTF-8.
type codec struct {
	name string            // as shown in messages; "" means utf-8
	enc  encoding.Encoding // nil means utf-8
}

var latin1 = codec{name: "latin-1", enc: charmap.ISO8859_1}

func (c codec) String() string {
	if c.name == "" {
		return "utf-8"
	}
	return c.name
}

// codecByName finds the encoding a detector named.
func codecByName(name string) (codec, bool) {
	switch strings.ToLower(name) {
	case "utf-8", "utf8", "ascii", "us-ascii":
		return codec{}, true
	case "iso-8859-1", "latin-1", "latin1":
		return latin1, true
	}
	enc, err := ianaindex.IANA.Encoding(name)
	if err != nil || enc == nil {
		enc, err = htmlindex.Get(name)
		if err != nil || enc == nil {
			return codec{}, false
		}
	}
	return codec{name: strings.ToLower(name), enc: enc}, true
}

// detectCodec picks the codec for a file's content. Valid UTF-8 is UTF-8.
// Otherwise a charset detector proposes an encoding, which is accepted only if
// decoding and re-encoding reproduces every byte; failing that, Latin-1 maps
// each byte to one character and back, so an edit never corrupts the bytes
// it does not touch.
func detectCodec(data []byte) codec {
	if utf8.Valid(data) {
		return codec{}
	}
	sample := data
	if len(sample) > detectSampleSize {
		sample = sample[:detectSampleSize]
	}
	if r := chardet.Detect(sample); r.Confidence >= minDetectConfidence {
		if c, ok := codecByName(r.Encoding); ok && c.enc != nil && c.roundTrips(data) {
			return c
		}
	}
	return latin1
}

// roundTrips reports whether b decodes without loss in c.
func (c codec) roundTrips(b []byte) bool {
	if c.enc == nil {
		return utf8.Valid(b)
	}
	s, err := c.enc.NewDecoder().Bytes(b)
	if err != nil {
		return false
	}
	back, err := c.enc.NewEncoder().Bytes(s)
	return err == nil && bytes.Equal(back, b)
}

func (c codec) decode(b []byte) (string, error) {
	if c.enc == nil {
		return string(b), nil
	}
	s, err := c.enc.NewDecoder().Bytes(b)
	if err != nil {
		return "", fmt.Errorf("decode as %s: %w", c, err)
	}
	return string(s), nil
}

// encode turns text into the file's bytes; text the encoding cannot hold is
// an error in the words Python uses for it.
func (c codec) encode(s string) ([]byte, error) {
	if c.enc == nil {
		return []byte(s), nil
	}
	b, err := c.enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("%s codec can't encode the text: %w", pyfmt.String(c.String()), err)
	}
	return b, nil
}
