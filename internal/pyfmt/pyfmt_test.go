package pyfmt

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The expected texts below are what CPython 3.11 prints for the same values
// (repr(x)), pasted as literals so that the tests need no Python.

func TestFloat_MatchesPython(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0.0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1.0, "1.0"},
		{2.5, "2.5"},
		{120.0, "120.0"},
		{0.1, "0.1"},
		{1e-05, "1e-05"},
		{1.5e-05, "1.5e-05"},
		{0.0001, "0.0001"},
		{0.00012, "0.00012"},
		{1e+16, "1e+16"},
		{9999999999999998.0, "9999999999999998.0"},
		{1e+22, "1e+22"},
		{1234567.0, "1234567.0"},
		{-3.25, "-3.25"},
		{1.0 / 3, "0.3333333333333333"},
		{1e-07, "1e-07"},
		{5e-324, "5e-324"},
		{1.7976931348623157e+308, "1.7976931348623157e+308"},
		{123456789012345.6, "123456789012345.6"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.NaN(), "nan"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Float(tt.in), "%v", tt.in)
	}
}

func TestString_MatchesPython(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"plain", "'plain'"},
		{"it's", "\"it's\""},
		{"say \"hi\"", "'say \"hi\"'"},
		{"both ' and \"", "'both \\' and \"'"},
		{"back\\slash", "'back\\\\slash'"},
		{"tab\x09new\x0aline\x0d", "'tab\\tnew\\nline\\r'"},
		{"\x00\x07\x1b\x7f", "'\\x00\\x07\\x1b\\x7f'"},
		{"\u0080\u009f\u00a0\u00ad", "'\\x80\\x9f\\xa0\\xad'"},
		{"\u00e9 \u00fc \u00f1", "'\u00e9 \u00fc \u00f1'"},
		{"\u200b\u2028\u3000", "'\\u200b\\u2028\\u3000'"},
		{"\u65e5\u672c\u8a9e", "'\u65e5\u672c\u8a9e'"},
		{"\U0001f600", "'\U0001f600'"},
		{"\U000e0001", "'\\U000e0001'"},
		{"\ufeff", "'\\ufeff'"},
		{"\ufffd", "'\ufffd'"},
		{"", "''"},
		{"/tmp/a b/c.txt", "'/tmp/a b/c.txt'"},
		{"\x0b\x0c", "'\\x0b\\x0c'"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, String(tt.in), "%q", tt.in)
		assert.Equal(t, tt.want, Repr(tt.in), "%q", tt.in)
	}
}

// tuple stands for a Python tuple, as callers' own types do.
type tuple []any

func (t tuple) PyRepr() string {
	if len(t) == 1 {
		return "(" + Repr(t[0]) + ",)"
	}
	return "(" + Join(t) + ")"
}

func TestRepr_MatchesPython(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"None", nil, "None"},
		{"True", true, "True"},
		{"False", false, "False"},
		{"int", -3, "-3"},
		{"int64", int64(42), "42"},
		{"float", 2.0, "2.0"},
		{"integer number", json.Number("7"), "7"},
		{"float number", json.Number("0.5"), "0.5"},
		{"small number", json.Number("0.00001"), "1e-05"},
		{"list", []any{"a", 1, 2.0, nil, true}, "['a', 1, 2.0, None, True]"},
		{"empty list", []any{}, "[]"},
		{"nested", []any{[]any{int64(1)}, "it's"}, "[[1], \"it's\"]"},
		{"dict", map[string]any{"k": false, "a": []any{1}}, "{'a': [1], 'k': False}"},
		{"one-tuple", tuple{"a"}, "('a',)"},
		{"empty tuple", tuple{}, "()"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Repr(tt.in))
		})
	}
}
