package shell

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkScreen_PlainOutput measures rendering of ordinary line output.
func BenchmarkScreen_PlainOutput(b *testing.B) {
	benchmarkScreenLines(b, func(d string) string { return "line of ordinary output number " + d })
}

// BenchmarkScreen_ColoredOutput measures lines that start with escape
// sequences, as test runners print them: none is plain, so the screen
// takes each through its window and the parser.
func BenchmarkScreen_ColoredOutput(b *testing.B) {
	benchmarkScreenLines(b, func(d string) string { return "\x1b[32mok\x1b[0m test number " + d + " passed" })
}

// benchmarkScreenLines writes 1000 lines made by line, each given a digit,
// to a screen in one write per iteration.
func benchmarkScreenLines(b *testing.B, line func(digit string) string) {
	var chunk []byte
	for i := range 1000 {
		chunk = append(chunk, line(string(rune('0'+i%10)))+"\r\n"...)
	}
	s := newScreen(func([]byte) {}, nil)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		s.Write(chunk)
	}
}

// BenchmarkScreen_SeqOutput measures what the terminal's reader does with
// `seq` output as a terminal delivers it: short lines ending in "\r\n", in
// reads of a kilobyte or two, kept in a command's output buffer.
func BenchmarkScreen_SeqOutput(b *testing.B) {
	var out []byte
	for i := range 100000 {
		out = strconv.AppendInt(out, int64(i), 10)
		out = append(out, '\r', '\n')
	}
	r := newRing(8 << 20)
	s := newScreen(r.Write, nil)
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		for rest := out; len(rest) > 0; {
			n := min(len(rest), 1500)
			s.WriteAt(rest[:n], time.Time{})
			rest = rest[n:]
		}
	}
}
