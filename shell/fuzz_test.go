package shell

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzSplitCommands checks that the splitter never panics and returns the
// commands as pieces of the text, in order.
func FuzzSplitCommands(f *testing.F) {
	for _, s := range []string{
		"ls\npwd", "echo a; echo b", "for i in 1 2; do\n echo $i\ndone\necho x",
		"cat <<EOF\nline\nEOF\necho after", "a && \\\n b", "echo 'unterminated", "# c\nls # d\n",
		"f() { echo; }\nf", "x=$(\necho y\n)\n", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		parts := withinTime(t, func() []string { return SplitCommands(text) })
		if len(parts) == 0 {
			t.Fatal("no commands")
		}
		rest := text
		for _, p := range parts {
			i := strings.Index(rest, p)
			if i < 0 {
				t.Fatalf("command %q is not a piece of %q (in order)", p, text)
			}
			rest = rest[i+len(p):]
		}
	})
}

// FuzzExamineInput checks that finding the here-documents a command leaves
// open never panics, and that their end lines, when appended, do complete
// the command.
func FuzzExamineInput(f *testing.F) {
	for _, s := range []string{
		"cat << EOF", "cat <<A <<-'B C'\nx\nA", "cat <<EOF; cat <<X\nEOF", "if true; then cat <<EOF",
		"cat <<\"EOF\" | tr a b", "echo 'open", "cat <<EOF\nx\nEOF", "",
	} {
		f.Add(s)
	}
	type result struct {
		open       []heredocStop
		incomplete bool
	}
	f.Fuzz(func(t *testing.T, text string) {
		r := withinTime(t, func() result {
			open, incomplete := examineInput(text)
			return result{open, incomplete}
		})
		if len(r.open) == 0 {
			return
		}
		if r.incomplete {
			t.Fatalf("%q: open here-documents and incomplete at once", text)
		}
		closed := text
		for _, h := range r.open {
			closed += "\n" + h.word
		}
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(closed), ""); err != nil {
			t.Fatalf("%q closed as %q does not parse: %v", text, closed, err)
		}
	})
}

// screenOutput feeds chunks to a fresh screen and returns everything it
// finalized, with the OSC commands it reported.
func screenOutput(chunks ...[]byte) string {
	var out bytes.Buffer
	s := newScreen(func(b []byte) { out.Write(b) }, func(cmd int, data []byte) {
		out.WriteString("<osc ")
		out.WriteString(strconv.Itoa(cmd) + ";")
		out.Write(data)
		out.WriteString(">")
	})
	now := time.Unix(0, 0)
	for _, c := range chunks {
		s.WriteAt(c, now)
	}
	s.flush()
	return out.String()
}

// FuzzScreen checks the terminal output cleaner: it never panics, and how
// the bytes are split into reads (escape sequences, UTF-8 sequences and
// markers cut in two) does not change what comes out.
func FuzzScreen(f *testing.F) {
	for _, s := range []string{
		"plain\n", "\x1b[31mred\x1b[0m\n", "progress 10%\rprogress 99%\n", "héllo wörld ✓\n",
		"\x1b]633;D;0\x07after\n", "a\x1b[2Kb\x1b[1Gc\n", "tab\there\x08x\n", "\x1b[?25l\x1b[Hhome\n",
	} {
		f.Add([]byte(s), uint16(len(s)/2))
	}
	// Reads cut where it hurts: inside the server's own prompt markers
	// (whose nonce and kind must arrive whole), inside a UTF-8 rune, an
	// escape sequence, or just after a carriage return.
	nonce := "0123456789abcdef"
	mark := func(kind byte) string { return fmt.Sprintf("\x1b]%d;%s;%c\a", oscMarker, nonce, kind) }
	prompt := "out\r\n" + mark(markEnd) + "0" + mark(markField) + "-1" + mark(markField) + "root" + mark(markField) +
		"host" + mark(markField) + "/tmp/é" + mark(markField) + "/usr/bin" + mark(markDone) +
		mark(markPrompt) + "root@host:/tmp/é# " + mark(markPromptEnd)
	for _, c := range []struct{ data, cutAfter string }{
		{mark(markStart) + "output\r\n", "\x1b"},
		{mark(markStart) + "output\r\n", "\x1b]69"},
		{mark(markStart) + "output\r\n", nonce[:7]},
		{prompt, "root" + mark(markField)[:3]},
		{prompt, "/tmp/\xc3"},
		{prompt, mark(markDone)[:len(mark(markDone))-1]},
		{"naïve ✓ 😀\n", "naïve ✓ \xf0\x9f"},
		{"50%\r100%\r\n", "50%\r"},
		{"\x1b[31mred\x1b[0m\n", "\x1b["},
		{"title\x1b]0;window\x1b\\after\n", "window\x1b"},
	} {
		k := strings.Index(c.data, c.cutAfter)
		if k < 0 {
			f.Fatalf("seed %q does not contain %q", c.data, c.cutAfter)
		}
		f.Add([]byte(c.data), uint16(k+len(c.cutAfter)))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		k := int(cut) % (len(data) + 1)
		whole := withinTime(t, func() string { return screenOutput(data) })
		split := withinTime(t, func() string { return screenOutput(data[:k], data[k:]) })
		if whole != split {
			t.Fatalf("output depends on where the read was cut (at %d of %q):\nwhole: %q\nsplit: %q", k, data, whole, split)
		}
	})
}

// withinTime runs fn and fails the fuzz input if it takes unreasonably
// long, so a hang is reported with its input instead of stalling the
// fuzzer.
func withinTime[T any](t *testing.T, fn func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	select {
	case v := <-done:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("took more than 5 s")
	}
	var zero T
	return zero
}

// bytewise splits data into one-byte writes. A write that short never
// holds a whole line, so passLines never acts on it: every byte goes
// through the window.
func bytewise(data []byte) [][]byte {
	out := make([][]byte, len(data))
	for i := range data {
		out[i] = data[i : i+1]
	}
	return out
}

// plainRun returns n plain lines of varied length, some empty, some
// with tabs.
func plainRun(n int) []byte {
	var b []byte
	for i := range n {
		switch i % 7 {
		case 3:
		case 5:
			b = append(b, "col\tcol\t"...)
		default:
			b = strconv.AppendInt(b, int64(i*i), 10)
		}
		b = append(b, '\r', '\n')
	}
	return b
}

// FuzzScreen_PassLines checks that lines handed straight to the output
// leave the same text, and the same live window, as lines taken through
// the window one by one: whatever the screen held before the run, and
// whatever reaches back into the window after it.
func FuzzScreen_PassLines(f *testing.F) {
	for _, c := range []struct {
		before, after string
		lines         uint16
	}{
		{"", "", 250},
		{"prompt$ ", "\x1b[60Aup\x1b[Bdown\r\n", 300},
		{"a\r\nb\r\n\x1b7", "\x1b8restored\r\n", 180},
		{"half a line", "\x1b[2J", 400},
		{"x\x1b[5Ay", "\x1b[99A\x1b[Kerased\r\n", 99},
		{"", "\x1b[120A", 100},
		{"line\n", "\x1b[H\x1b[1J", 101},
		{"\x1b[31m", "\x1b[0m", 1000},
		{"é\r\n", "ü\rover\r\n", 260},
		// The saved cursor lies below the cursor once the display is
		// erased from it: passing lines must move it up as popping would.
		{strings.Repeat("l\r\n", 120) + "\x1b7\x1b[60A\r\x1b[J\r\n", "\x1b8saved\r\n", 100},
	} {
		f.Add([]byte(c.before), []byte(c.after), c.lines)
	}
	f.Fuzz(func(t *testing.T, before, after []byte, lines uint16) {
		data := append(append(append([]byte{}, before...), plainRun(int(lines%2000))...), after...)
		passed := withinTime(t, func() string { return screenOutput(data) })
		walked := withinTime(t, func() string { return screenOutput(bytewise(data)...) })
		if passed != walked {
			t.Fatalf("passing lines changed the output of %q:\npassed: %q\nwalked: %q", data, passed, walked)
		}
	})
}

// screenRead is one read of screenReads: the bytes up to end, then
// optionally a look at the live window and a settle.
type screenRead struct {
	end         int
	live, quiet bool
}

// screenReads feeds data to a screen in the reads given, a second apart,
// and returns everything that came out: the finalized text, markers, the
// live window where a read asks for it, and where settling (quiet 1.5 s)
// happened. Bytewise, each read's bytes are written one at a time, which
// never passes or holds a line.
func screenReads(data []byte, reads []screenRead, bytewise bool) string {
	var out bytes.Buffer
	s := newScreen(func(b []byte) { out.Write(b) }, func(cmd int, data []byte) {
		fmt.Fprintf(&out, "<osc %d;%s>", cmd, data)
	})
	now, off := time.Unix(0, 0), 0
	for _, r := range reads {
		if bytewise {
			for ; off < r.end; off++ {
				s.WriteAt(data[off:off+1], now)
			}
		} else {
			s.WriteAt(data[off:r.end], now)
			off = r.end
		}
		if r.live {
			fmt.Fprintf(&out, "<live %q>", s.appendLive(nil))
		}
		if r.quiet {
			s.settle(now, 1500*time.Millisecond)
			out.WriteString("<settled>")
		}
		now = now.Add(time.Second)
	}
	s.flush()
	return out.String()
}

// FuzzScreen_HeldLines checks lines held out of the window across reads
// (see heldLines): plain lines and other output cut into reads of any
// size, with the window looked at after some reads and settled after
// others, leave the same text and live windows as the same bytes taken
// one at a time. TestScreen_HeldLines pins the cases a fuzzer finds late.
func FuzzScreen_HeldLines(f *testing.F) {
	for _, c := range []struct {
		before, middle, after string
		lines                 uint16
		cuts                  uint64
	}{
		{"", "", "", 400, 0x0123456789abcdef},
		{"prompt$ ", "\x1b[31mred\x1b[0m\r\n", "\x1b[60Aup\x1b[Bdown\r\n", 300, 0xfedcba9876543210},
		{"a\r\n\x1b7", "mid", "\x1b8restored\r\n", 500, 0x1111111111111111},
		{"", "\x1b[2J", "\x1b[99A\x1b[Kerased\r\n", 250, 0x8040201008040201},
		{"x", "", "\x1b]697;n;E\a", 1000, 0x0f0f0f0f0f0f0f0f},
		{"", "\t\ttabs\r\n", "\x1b[120A\x1b[1J", 150, 0xaaaaaaaaaaaaaaaa},
	} {
		f.Add([]byte(c.before), []byte(c.middle), []byte(c.after), c.lines, c.cuts)
	}
	f.Fuzz(func(t *testing.T, before, middle, after []byte, lines uint16, cuts uint64) {
		var data []byte
		data = append(data, before...)
		data = append(data, plainRun(int(lines%1500))...)
		data = append(data, middle...)
		data = append(data, plainRun(int(lines/3%700))...)
		data = append(data, after...)
		// Each 8 bits of cuts pick a read's length (1 to 2017 bytes)
		// and what follows it; they repeat every eight reads.
		var reads []screenRead
		for off, c := 0, cuts; off < len(data); c = c>>8 | c<<56 {
			off = min(len(data), off+1+int(c&0x3f)*int(c>>6&3+1)*8)
			reads = append(reads, screenRead{end: off, live: c&0x40 != 0, quiet: c&0x80 != 0})
		}
		held := withinTime(t, func() string { return screenReads(data, reads, false) })
		walked := withinTime(t, func() string { return screenReads(data, reads, true) })
		if held != walked {
			t.Fatalf("holding lines changed the output of %q read as %v:\nheld:   %q\nwalked: %q", data, reads, held, walked)
		}
	})
}
