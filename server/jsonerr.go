package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// describeJSON returns err's text with the errors of encoding/json in it
// said in the client's terms: the JSON field and the kind of value it
// takes, never the Go type the server decodes it into.
func describeJSON(err error) string {
	msg := err.Error()
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return strings.Replace(msg, typeErr.Error(), typeText(typeErr), 1)
	case errors.As(err, &syntaxErr):
		return strings.Replace(msg, syntaxErr.Error(),
			fmt.Sprintf("not valid JSON at byte %d (%s)", syntaxErr.Offset, syntaxErr.Error()), 1)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return strings.Replace(msg, io.ErrUnexpectedEOF.Error(), "the JSON ends too early", 1)
	}
	return strings.Replace(msg, "json: unknown field", "unknown field", 1)
}

// typeText says which field had a value of the wrong kind, and what it
// takes.
func typeText(e *json.UnmarshalTypeError) string {
	got := e.Value
	if n, ok := strings.CutPrefix(got, "number "); ok {
		// A number that does not fit: encoding/json names it.
		got = n
		if k := e.Type.Kind(); k == reflect.Float32 || k == reflect.Float64 {
			got += " (out of range)"
		}
	}
	if e.Field == "" {
		return fmt.Sprintf("expected %s, not %s", kindText(e.Type), got)
	}
	return fmt.Sprintf("field %q must be %s, not %s", e.Field, kindText(e.Type), got)
}

// kindText names the JSON values a Go type decodes from.
func kindText(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return kindText(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return fmt.Sprintf("an integer from %d to %d", -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if t.Bits() == 64 {
			return "a non-negative integer"
		}
		return fmt.Sprintf("an integer from 0 to %d", uint64(1)<<t.Bits()-1)
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another kind of value"
}
