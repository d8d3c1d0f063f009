package client

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/actionserver/actionserver/api"
)

// Following bulk output, decoding its JSON took more CPU than the server
// spent producing it: encoding/json scans a payload twice, byte by byte
// through its state machine, and output of short lines is dense with
// escapes. The output payloads (an SSE output event, a long poll's chunk)
// are flat objects of strings, integers and booleans, which the server
// writes without spaces; that form is decoded here by hand, and anything
// else, or anything unusual inside it, by encoding/json, so the result is
// always what encoding/json would give.

// decodeOutputEvent decodes the payload of an output event.
func decodeOutputEvent(b []byte) (api.OutputEvent, error) {
	var d api.OutputEvent
	ok := scanFlatObject(b, func(key []byte, v flatValue) bool {
		switch string(key) {
		case "data":
			return v.setString(&d.Data)
		case "offset":
			return v.setInt(&d.Offset)
		}
		return false
	})
	if ok {
		return d, nil
	}
	d = api.OutputEvent{}
	err := json.Unmarshal(b, &d)
	return d, err
}

// decodeOutputChunk decodes the answer to an output read.
func decodeOutputChunk(b []byte) (api.OutputChunk, error) {
	var ch api.OutputChunk
	ok := scanFlatObject(b, func(key []byte, v flatValue) bool {
		switch string(key) {
		case "offset":
			return v.setInt(&ch.Offset)
		case "next_offset":
			return v.setInt(&ch.NextOffset)
		case "lost":
			return v.setInt(&ch.Lost)
		case "data":
			return v.setString(&ch.Data)
		case "tail":
			return v.setString(&ch.Tail)
		case "done":
			return v.setBool(&ch.Done)
		case "exit_code":
			return v.setIntPtr(&ch.ExitCode)
		}
		return false
	})
	if ok {
		return ch, nil
	}
	ch = api.OutputChunk{}
	err := json.Unmarshal(b, &ch)
	return ch, err
}

// flatValue is a member's value in a flat object.
type flatValue struct {
	kind byte // '"' string, '0' integer, 't' true, 'f' false, 'n' null
	str  string
	num  int64
}

// The setters store v as encoding/json would into a field of that type,
// and report false where it would fail. A null leaves a value unchanged
// and sets a pointer to nil.

func (v flatValue) setString(dst *string) bool {
	switch v.kind {
	case '"':
		*dst = v.str
	case 'n':
	default:
		return false
	}
	return true
}

func (v flatValue) setInt(dst *int64) bool {
	switch v.kind {
	case '0':
		*dst = v.num
	case 'n':
	default:
		return false
	}
	return true
}

func (v flatValue) setBool(dst *bool) bool {
	switch v.kind {
	case 't', 'f':
		*dst = v.kind == 't'
	case 'n':
	default:
		return false
	}
	return true
}

func (v flatValue) setIntPtr(dst **int) bool {
	switch v.kind {
	case '0':
		n := int(v.num)
		if int64(n) != v.num {
			return false
		}
		*dst = &n
	case 'n':
		*dst = nil
	default:
		return false
	}
	return true
}

// scanFlatObject hands each member of the JSON object b to field, in
// order. It takes only what encoding/json writes for a flat object: no
// spaces, keys of plain ASCII without escapes, and values that are
// strings, integers, true, false or null. It reports false when b is
// anything else, or when field does.
func scanFlatObject(b []byte, field func(key []byte, v flatValue) bool) bool {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	rest := b[1 : len(b)-1]
	for len(rest) > 0 {
		if rest[0] != '"' {
			return false
		}
		end := bytes.IndexByte(rest[1:], '"')
		if end < 0 {
			return false
		}
		key := rest[1 : 1+end]
		for _, c := range key {
			if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
				return false
			}
		}
		rest = rest[2+end:]
		if len(rest) == 0 || rest[0] != ':' {
			return false
		}
		v, n, ok := scanFlatValue(rest[1:])
		if !ok || !field(key, v) {
			return false
		}
		rest = rest[1+n:]
		if len(rest) > 0 {
			if rest[0] != ',' || len(rest) == 1 {
				return false
			}
			rest = rest[1:]
		}
	}
	return true
}

// scanFlatValue reads the value at the start of b and returns it with the
// length it took.
func scanFlatValue(b []byte) (flatValue, int, bool) {
	if len(b) == 0 {
		return flatValue{}, 0, false
	}
	switch b[0] {
	case '"':
		s, n, ok := unquoteJSON(b[1:])
		return flatValue{kind: '"', str: s}, 1 + n, ok
	case 't':
		return flatValue{kind: 't'}, 4, bytes.HasPrefix(b, []byte("true"))
	case 'f':
		return flatValue{kind: 'f'}, 5, bytes.HasPrefix(b, []byte("false"))
	case 'n':
		return flatValue{kind: 'n'}, 4, bytes.HasPrefix(b, []byte("null"))
	}
	n := 0
	if b[0] == '-' {
		n++
	}
	digits := n
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == digits || (b[digits] == '0' && n > digits+1) {
		return flatValue{}, 0, false // no digits, or a leading zero
	}
	if n < len(b) && (b[n] == '.' || b[n] == 'e' || b[n] == 'E') {
		return flatValue{}, 0, false // not an integer
	}
	v, err := strconv.ParseInt(string(b[:n]), 10, 64)
	return flatValue{kind: '0', num: v}, n, err == nil
}

// unquoteJSON decodes the JSON string whose body starts b (after its
// opening quote) and returns it with the length of b it took, closing
// quote included. It declines (ok false) what it does not decode exactly
// as encoding/json does: invalid JSON, invalid UTF-8 (which encoding/json
// replaces), and \u escapes of surrogates.
func unquoteJSON(b []byte) (s string, n int, ok bool) {
	var sb strings.Builder
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
		if j >= len(b) {
			return "", 0, false // no closing quote
		}
		if i == 0 && b[j] == '"' {
			// No escapes: the string is the run itself.
			s = string(b[:j])
			if !ascii && !utf8.ValidString(s) {
				return "", 0, false
			}
			return s, j + 1, true
		}
		if i == 0 {
			// Escapes only shorten: what is left of b bounds the string.
			sb.Grow(len(b))
		}
		sb.Write(b[i:j])
		switch b[j] {
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
	if len(b) == 0 {
		return 0, false
	}
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
		var v rune
		for _, c := range b[1:5] {
			switch {
			case c >= '0' && c <= '9':
				v = v<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				v = v<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				v = v<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		if utf16IsSurrogate(v) {
			return 0, false
		}
		sb.WriteRune(v)
		return 5, true
	default:
		return 0, false
	}
	return 1, true
}

func utf16IsSurrogate(r rune) bool { return r >= 0xd800 && r < 0xe000 }
