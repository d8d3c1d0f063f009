package swerex

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// Bytes to text as upstream's Python turns them: output decodes with
// errors="backslashreplace", files as Path.read_text does.

// backslashReplace decodes UTF-8, writing each byte that is not part of a
// valid sequence as \xNN, as bytes.decode(errors="backslashreplace").
func backslashReplace(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			fmt.Fprintf(&sb, `\x%02x`, b[0])
			b = b[1:]
			continue
		}
		sb.Write(b[:n])
		b = b[n:]
	}
	return sb.String()
}

// decodeText decodes a file's bytes as Path.read_text(encoding, errors)
// does, universal newlines included: "\r\n" and "\r" read as "\n".
func decodeText(b []byte, encoding, errs string) (string, error) {
	switch errs {
	case "", "strict", "replace", "ignore", "backslashreplace":
	default:
		return "", newException(classLookupError, "unknown error handler name %s", pyfmt.String(errs))
	}
	var text string
	switch strings.ReplaceAll(strings.ToLower(encoding), "_", "-") {
	case "", "utf-8", "utf8", "u8":
		s, err := decodeUTF8(b, errs)
		if err != nil {
			return "", err
		}
		text = s
	case "latin-1", "latin1", "iso-8859-1", "iso8859-1", "l1":
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		text = string(r)
	case "ascii", "us-ascii":
		s, err := decodeASCII(b, errs)
		if err != nil {
			return "", err
		}
		text = s
	default:
		return "", newException(classLookupError, "unknown encoding: %s", encoding)
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	return strings.ReplaceAll(text, "\r", "\n"), nil
}

func decodeUTF8(b []byte, errs string) (string, error) {
	if utf8.Valid(b) {
		return string(b), nil
	}
	var sb strings.Builder
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || n > 1 {
			sb.Write(b[i : i+n])
			i += n
			continue
		}
		switch errs {
		case "", "strict":
			reason := "invalid start byte"
			if !utf8.RuneStart(b[i]) {
				reason = "invalid start byte"
			} else if !utf8.FullRune(b[i:]) {
				reason = "unexpected end of data"
			} else if b[i] >= 0xc2 && b[i] <= 0xf4 {
				reason = "invalid continuation byte"
			}
			return "", newException(classUnicodeDecode, "'utf-8' codec can't decode byte 0x%02x in position %d: %s", b[i], i, reason)
		case "replace":
			sb.WriteRune(utf8.RuneError)
		case "backslashreplace":
			fmt.Fprintf(&sb, `\x%02x`, b[i])
		}
		i++
	}
	return sb.String(), nil
}

func decodeASCII(b []byte, errs string) (string, error) {
	var sb strings.Builder
	for i, c := range b {
		if c < 0x80 {
			sb.WriteByte(c)
			continue
		}
		switch errs {
		case "", "strict":
			return "", newException(classUnicodeDecode, "'ascii' codec can't decode byte 0x%02x in position %d: ordinal not in range(128)", c, i)
		case "replace":
			sb.WriteRune(utf8.RuneError)
		case "backslashreplace":
			fmt.Fprintf(&sb, `\x%02x`, c)
		}
	}
	return sb.String(), nil
}
