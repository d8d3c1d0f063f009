// Package pyfmt writes Go values the way Python prints them: repr() of
// strings, numbers, None, booleans and lists, and str() of floats.
//
// OpenHands agents read texts that a Python server produced (an OSError's
// message, an accessibility tree, a timeout in seconds) and were trained on
// them, so the action server must print the same characters.
package pyfmt

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Reprer is a value that stands for a Python one Go has no type for (a
// tuple, a dict in source order) and knows its own repr.
type Reprer interface {
	PyRepr() string
}

// Repr formats v as Python's repr() does: nil is None, booleans are True
// and False, strings are quoted (see String), floats as Float, []any is a
// list. A map[string]any prints with its keys sorted, since Go keeps no
// order. A Reprer prints itself; anything else as fmt.Sprint.
func Repr(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		if v {
			return "True"
		}
		return "False"
	case string:
		return String(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return Float(v)
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return strconv.FormatInt(i, 10)
		}
		if f, err := v.Float64(); err == nil {
			return Float(f)
		}
		return v.String()
	case Reprer:
		return v.PyRepr()
	case []any:
		return "[" + Join(v) + "]"
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = String(k) + ": " + Repr(v[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		return fmt.Sprint(v)
	}
}

// Join is the reprs of items separated by ", ", the inside of a Python list
// or tuple.
func Join(items []any) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = Repr(it)
	}
	return strings.Join(parts, ", ")
}

// String quotes s as Python's repr(str) does: in single quotes unless s holds
// a single quote and no double quote, with \n, \r, \t and \\ escaped and any
// character Python does not print (controls, format characters, separators
// other than the space) as \xhh, \uhhhh or \Uhhhhhhhh. Bytes that are not
// UTF-8 read as U+FFFD, as they do once the text has crossed JSON.
func String(s string) string {
	q := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteRune(q)
	for _, r := range s {
		switch {
		case r == q || r == '\\':
			b.WriteRune('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsPrint(r):
			// Go's printable set is Python's str.isprintable: letters,
			// marks, numbers, punctuation, symbols and the ASCII space.
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteRune(q)
	return b.String()
}

// Float formats f as Python's repr(float) and str(float) do: the shortest
// digits that read back, ".0" on whole numbers, an exponent of at least two
// digits when the magnitude is below 1e-4 or at least 1e16, and inf, -inf
// and nan.
func Float(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	if abs := math.Abs(f); abs != 0 && (abs < 1e-4 || abs >= 1e16) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
