package client

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/actionserver/actionserver/api"
)

// Following bulk output, decoding the output events' JSON took more CPU
// than the server spent producing them: encoding/json scans each payload
// twice and goes through reflection, and output of short lines is dense
// with escapes. The server writes these payloads in one form,
// {"data":"...","offset":N}; that form is decoded here by hand, and
// anything else (or anything unusual inside it) by encoding/json, so the
// result is always what encoding/json would give.

// decodeOutputEvent decodes the payload of an output event.
func decodeOutputEvent(b []byte) (api.OutputEvent, error) {
	if d, ok := parseOutputEvent(b); ok {
		return d, nil
	}
	var d api.OutputEvent
	err := json.Unmarshal(b, &d)
	return d, err
}

// parseOutputEvent decodes b if it has the form the server writes.
func parseOutputEvent(b []byte) (api.OutputEvent, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"data":"`))
	if !ok {
		return api.OutputEvent{}, false
	}
	data, n, ok := unquoteJSON(rest)
	if !ok {
		return api.OutputEvent{}, false
	}
	rest, ok = bytes.CutPrefix(rest[n:], []byte(`,"offset":`))
	if !ok {
		return api.OutputEvent{}, false
	}
	num, ok := bytes.CutSuffix(rest, []byte("}"))
	if !ok || !isJSONUint(num) {
		return api.OutputEvent{}, false
	}
	off, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil {
		return api.OutputEvent{}, false
	}
	return api.OutputEvent{Data: data, Offset: off}, true
}

// isJSONUint reports whether b is a JSON number that is a non-negative
// integer without exponent: digits, no leading zero.
func isJSONUint(b []byte) bool {
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// unquoteJSON decodes the JSON string whose body starts b (after its
// opening quote) and returns it with the length of b it took, closing
// quote included. It declines (ok false) what it does not decode exactly
// as encoding/json does: invalid JSON, invalid UTF-8 (which encoding/json
// replaces), and \u escapes of surrogates.
func unquoteJSON(b []byte) (s string, n int, ok bool) {
	var sb strings.Builder
	sb.Grow(len(b))
	ascii := true
	i := 0
	for {
		// The run up to the next quote, escape or invalid byte.
		j := i
		for j < len(b) {
			c := b[j]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			if c >= utf8.RuneSelf {
				ascii = false
			}
			j++
		}
		sb.Write(b[i:j])
		if j+1 >= len(b) {
			// No closing quote, or an escape cut short.
			return "", 0, false
		}
		switch c := b[j]; c {
		case '"':
			if !ascii && !utf8.ValidString(sb.String()) {
				return "", 0, false
			}
			return sb.String(), j + 1, true
		case '\\':
			k, ok := unescapeJSON(&sb, b[j+1:])
			if !ok {
				return "", 0, false
			}
			i = j + 1 + k
		default:
			return "", 0, false // a control character must be escaped
		}
	}
}

// unescapeJSON writes the character that the escape at the start of b
// (after its backslash) stands for, and returns how many bytes it took.
func unescapeJSON(sb *strings.Builder, b []byte) (int, bool) {
	switch b[0] {
	case '"', '\\', '/':
		sb.WriteByte(b[0])
	case 'b':
		sb.WriteByte('\b')
	case 'f':
		sb.WriteByte('\f')
	case 'n':
		sb.WriteByte('\n')
	case 'r':
		sb.WriteByte('\r')
	case 't':
		sb.WriteByte('\t')
	case 'u':
		if len(b) < 5 {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[1:5]), 16, 16)
		if err != nil || (v >= 0xd800 && v < 0xe000) {
			return 0, false
		}
		sb.WriteRune(rune(v))
		return 5, true
	default:
		return 0, false
	}
	return 1, true
}
