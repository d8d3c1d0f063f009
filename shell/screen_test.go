package shell

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// render feeds chunks to a fresh screen and returns final + live text.
func render(chunks ...string) string {
	var out bytes.Buffer
	s := newScreen(func(b []byte) { out.Write(b) }, nil)
	for _, c := range chunks {
		s.Write([]byte(c))
	}
	s.flush()
	return out.String()
}

func TestScreen_Render(t *testing.T) {
	cases := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"plain lines", []string{"a\r\nb\r\n"}, "a\nb\n"},
		{"carriage return overwrites", []string{"50%\r100%\r\n"}, "100%\n"},
		{"progress bar keeps final state", []string{"[#   ] 25%\r[##  ] 50%\r[####] 100%\r\n"}, "[####] 100%\n"},
		{"shorter overwrite keeps tail", []string{"abcdef\rxy\r\n"}, "xycdef\n"},
		{"erase to end of line", []string{"abcdef\rxy\x1b[K\r\n"}, "xy\n"},
		{"erase whole line", []string{"abc\x1b[2K\rz\r\n"}, "z\n"},
		{"colours dropped", []string{"\x1b[1;31mred\x1b[0m plain\r\n"}, "red plain\n"},
		{"title and private modes dropped", []string{"\x1b]0;title\x07\x1b[?2004hx\x1b[?2004l\r\n"}, "x\n"},
		{"backspace", []string{"abc\b\bX\r\n"}, "aXc\n"},
		{"tab kept", []string{"a\tb\r\n"}, "a\tb\n"},
		{"cursor up redraws lines", []string{"1/2 ...\r\n2/2 ...\r\n\x1b[2A\r1/2 done\x1b[K\r\n2/2 done\x1b[K\r\n"}, "1/2 done\n2/2 done\n"},
		{"column absolute", []string{"abcdef\x1b[3GX\r\n"}, "abXdef\n"},
		{"clear screen", []string{"junk\r\nmore\x1b[H\x1b[2Jclean\r\n"}, "clean\n"},
		{"escape split across writes", []string{"a\x1b", "[3", "1mb\x1b[0", "m\r\n"}, "ab\n"},
		{"utf-8 split across writes", []string{"caf\xc3", "\xa9 \xe2\x82", "\xac\r\n"}, "café €\n"},
		{"partial last line", []string{"done"}, "done"},
		{"cursor forward pads", []string{"a\x1b[3Cb\r\n"}, "a   b\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, render(tc.chunks...))
		})
	}
}

func TestScreen_MarkersSplitAcrossWrites(t *testing.T) {
	var got []string
	s := newScreen(func([]byte) {}, func(cmd int, data []byte) {
		got = append(got, string(data))
	})
	for _, c := range []string{"x\x1b]69", "7;abc;", "E\x07y\x1b]697;abc;D\x1b\\"} {
		s.Write([]byte(c))
	}
	assert.Equal(t, []string{"697;abc;E", "697;abc;D"}, got)
}

func TestScreen_FinalizesOldLinesAndBoundsMemory(t *testing.T) {
	var out bytes.Buffer
	s := newScreen(func(b []byte) { out.Write(b) }, nil)
	for i := 0; i < 10*screenLines; i++ {
		s.Write([]byte("line\r\n"))
	}
	assert.LessOrEqual(t, len(s.lines), screenLines, "window stays bounded")
	assert.Equal(t, 10*screenLines-len(s.lines)+1, strings.Count(out.String(), "\n"), "older lines are final")

	// One enormous line without a newline is finalized in pieces.
	out.Reset()
	s = newScreen(func(b []byte) { out.Write(b) }, nil)
	big := strings.Repeat("x", 10*lineMaxRunes)
	s.Write([]byte(big))
	assert.LessOrEqual(t, s.liveSize, lineMaxRunes)
	s.flush()
	assert.Equal(t, big, out.String(), "no byte lost when wrapping")
}

func TestScreen_ManyLongLinesBounded(t *testing.T) {
	s := newScreen(func([]byte) {}, nil)
	line := strings.Repeat("y", lineMaxRunes-1) + "\r\n"
	for range 3 * screenLines {
		s.Write([]byte(line))
	}
	assert.LessOrEqual(t, s.liveSize, screenMaxRunes+lineMaxRunes)
}

// TestScreen_PlainLinesAllocateNothing guards the memory bound of a flood of
// output: once warm, lines scrolling through the screen reuse its buffers.
// Garbage made per line, several times the output's size, would let the
// heap (and the server's resident memory) grow with the output.
func TestScreen_PlainLinesAllocateNothing(t *testing.T) {
	var sunk int
	s := newScreen(func(b []byte) { sunk += len(b) }, nil)
	chunk := []byte(strings.Repeat("some output line\r\n", 1000))
	now := time.Unix(0, 0)
	s.WriteAt(chunk, now) // warm up: the line buffers and arrays
	allocs := testing.AllocsPerRun(20, func() { s.WriteAt(chunk, now) })
	assert.Zero(t, allocs, "allocations per 1000 lines")
	assert.Positive(t, sunk)
}

// TestScreen_OSCWholeOrByteByByte checks that an OSC sequence arriving
// whole, which the screen takes in one step, reaches osc and the text
// around it exactly as it does through the parser, byte by byte.
func TestScreen_OSCWholeOrByteByByte(t *testing.T) {
	feed := func(data string, split bool) string {
		var out strings.Builder
		s := newScreen(func(b []byte) { out.Write(b) }, func(cmd int, d []byte) {
			out.WriteString("<" + strconv.Itoa(cmd) + "|" + string(d) + ">")
		})
		if !split {
			s.Write([]byte(data))
		} else {
			for i := range len(data) {
				s.Write([]byte{data[i]})
			}
		}
		s.flush()
		return out.String()
	}
	cases := []string{
		"a\x1b]697;0123456789abcdef;E\x070\x1b]697;0123456789abcdef;F\x07/usr/bin\x1b]697;0123456789abcdef;D\x07b",
		"out\r\nlast line\r\n\x1b]697;0123456789abcdef;S\x07more\r\n\x1b]697;0123456789abcdef;E\x07",
		// Lines scrolled out of the live window before the marker.
		strings.Repeat("line\r\n", 3*screenLines/2) + "\x1b]697;0123456789abcdef;E\x07tail",
		"\x1b]0;window title\x07x",
		"\x1b]633;D;0\x07after",
		"\x1b]8;;http://example.com/\x07link\x1b]8;;\x07",
		"\x1b]697\x07no data",
		"\x1b];no number\x07z",
		"\x1b]12a;mixed\x07z",
		"\x1b]1234567890123;too long a number\x07z",
		"\x1b]2;tab\tinside\x07z",
		"\x1b]2;ends with ST\x1b\\z",
		"\x1b]2;unfinished",
		"\x1b]2;" + strings.Repeat("d", 5000) + "\x07big",
		"\x1b]2;" + strings.Repeat("d", 4094) + "\x07fits",
		"\x1b]2;caf\xc3\xa9\x07utf-8",
	}
	for _, data := range cases {
		assert.Equal(t, feed(data, true), feed(data, false), "%q", data)
	}
	// Text reaches the sink only when a line is final (here: at the end).
	assert.Equal(t, "<697|697;0123456789abcdef;E><697|697;0123456789abcdef;F><697|697;0123456789abcdef;D>a0/usr/binb",
		feed(cases[0], false))
}

// TestScreen_HeldLines pins what lines held out of the window must keep
// (see FuzzScreen_HeldLines, which compares the same way): each case
// fails if that part of holding is left out.
func TestScreen_HeldLines(t *testing.T) {
	run := plainRun(300)
	for _, c := range []struct {
		name  string
		data  []byte
		reads []screenRead // ends < 0 count from the end of data
	}{
		{
			// Held at 0 s, taken into the window at 1 s, settled at 2 s:
			// lines written at 0 s are final then, not 1.5 s later.
			name:  "held lines keep the time they were written",
			data:  append(append([]byte{}, run...), "\x1b[31mx"...),
			reads: []screenRead{{end: len(run)}, {end: -1}, {end: -1, quiet: true}},
		},
		{
			name:  "settling finalizes held lines",
			data:  append([]byte{}, run...),
			reads: []screenRead{{end: len(run)}, {end: -1}, {end: -1, quiet: true}},
		},
		{
			name:  "the live window shows held lines",
			data:  append([]byte{}, run...),
			reads: []screenRead{{end: len(run), live: true}},
		},
		{
			// A line begun in one read and ended in the next is as long
			// as both parts: the window cuts it when it is too long.
			name: "a held line start counts toward the line's length",
			data: []byte(string(run) + strings.Repeat("x", lineMaxRunes/2+1) + strings.Repeat("y", lineMaxRunes/2+1) +
				"\r\nnext\r\n"),
			reads: []screenRead{{end: len(run) + lineMaxRunes/2 + 1}, {end: -1, live: true}},
		},
		{
			// A line begun in one read scrolls out within the next,
			// which brings a screenful more.
			name:  "a held line start joins its end when the line scrolls out",
			data:  []byte(string(run) + "begun in one read, " + "ended in the next\r\n" + string(run)),
			reads: []screenRead{{end: len(run) + 19}, {end: -1}},
		},
		{
			// The cursor saved below the cursor (after erasing up to
			// it) moves up with every line that scrolls out, held ones
			// too.
			name: "the saved cursor moves up as lines pass",
			data: []byte(strings.Repeat("l\r\n", 120) + "\x1b7\x1b[60A\r\x1b[J\r\n" + string(run) + string(run) +
				"\x1b8saved\r\n"),
			reads: []screenRead{{end: 120*3 + 13 + len(run)}, {end: 120*3 + 13 + 2*len(run)}, {end: -1}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := range c.reads {
				if c.reads[i].end < 0 {
					c.reads[i].end = len(c.data)
				}
			}
			assert.Equal(t, screenReads(c.data, c.reads, true), screenReads(c.data, c.reads, false))
		})
	}
}

// TestScreen_HeldLinesBounded guards the memory held lines take: no more
// than the window would hold, however long the lines and the reads.
func TestScreen_HeldLinesBounded(t *testing.T) {
	for _, width := range []int{1, 100, 2000, lineMaxRunes - 1} {
		s := newScreen(func([]byte) {}, nil)
		// Short lines first, so lines are held from the first read on.
		line := strings.Repeat("z", width) + "\r\n"
		data := []byte(strings.Repeat("a\r\n", 2*screenLines) + strings.Repeat(line, 3*screenLines) + "z")
		for len(data) > 0 {
			n := min(len(data), 64<<10)
			s.Write(data[:n])
			data = data[n:]
			assert.Less(t, s.held.len(), screenLines)
			assert.LessOrEqual(t, len(s.held.text), screenMaxRunes+screenLines+lineMaxRunes, "width %d", width)
		}
	}
}
