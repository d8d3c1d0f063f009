package shell

import (
	"bytes"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// screen renders the byte stream of a terminal into plain text, the way a
// person would read it on screen: escape sequences are interpreted or
// dropped, a carriage return lets the rest of a line be overwritten (so a
// progress bar leaves only its final state), and cursor movement can rewrite
// the last few lines.
//
// Only the last few lines (the live window) can still change. Older lines are
// final and are handed to the sink as soon as they leave the window, so the
// memory a screen holds is bounded however much a program prints.
//
// Escape sequences, UTF-8 runes and markers split across Write calls are
// handled by the parser's state machine. A screen is not safe for concurrent
// use.
type screen struct {
	p *ansi.Parser

	lines    [][]rune    // live window; the cursor is always inside it
	mod      []time.Time // when each live line last changed
	row, col int
	liveSize int       // runes held in lines, to bound memory
	now      time.Time // time of the Write being processed

	savedRow, savedCol int

	// sink receives finalized text: whole lines with their '\n', or the
	// head of an over-long line without one.
	sink func([]byte)
	// osc receives operating system commands (markers). It may call flush.
	osc func(cmd int, data []byte)

	// out collects finalized text for the sink, which gets it once per
	// Write (and before a marker, settle or flush) rather than once per
	// line: bulk output is mostly short lines.
	out   []byte
	spare [][]rune // emptied line buffers, reused for new lines

	// held keeps the last plain lines of a flood of output, and the
	// start of the cursor's line, out of the window until something other
	// than more plain lines comes: see passLines and heldLines.
	held heldLines

	// linesArr and modArr are the arrays lines and mod slide through as
	// finalized lines leave at the front; see compact.
	linesArr [][]rune
	modArr   []time.Time
}

const (
	// screenLines is how many lines cursor movement can reach back into.
	// Progress displays redraw far fewer; older lines are final.
	screenLines = 100
	// screenMaxRunes bounds the runes held in the live window. Past it the
	// oldest lines, or the head of the current line, become final early.
	screenMaxRunes = 64 << 10
	// lineMaxRunes is where a line without a newline is cut: its head
	// becomes final and the line goes on (like an auto-wrapping terminal).
	lineMaxRunes = 16 << 10
	// spareLineCap is the largest line buffer kept for reuse.
	spareLineCap = 1 << 10
	// maxKeptOut is the largest buffer of finalized or held text kept
	// for reuse; a terminal read rarely finalizes or holds more.
	maxKeptOut = 64 << 10
	// oscDataMax bounds the data of an OSC sequence the parser keeps.
	oscDataMax = 4096
)

func newScreen(sink func([]byte), osc func(cmd int, data []byte)) *screen {
	s := &screen{sink: sink, osc: osc, lines: [][]rune{nil}, mod: []time.Time{{}}}
	s.p = ansi.NewParser()
	// Our markers are short; a bounded buffer keeps a hostile OSC from
	// growing memory.
	s.p.SetDataSize(oscDataMax)
	s.p.SetHandler(ansi.Handler{
		Print:     s.print,
		Execute:   s.execute,
		HandleCsi: s.csi,
		HandleEsc: s.esc,
		HandleOsc: s.handleOSC,
	})
	return s
}

// handleOSC passes an OSC sequence to osc. The handler may route what
// follows elsewhere (a marker changes the phase): what came before goes
// out first.
func (s *screen) handleOSC(cmd int, data []byte) {
	s.drain()
	if s.osc != nil {
		s.osc(cmd, data)
	}
}

// Write feeds terminal output to the screen. It never fails.
func (s *screen) Write(b []byte) (int, error) {
	return s.WriteAt(b, time.Now())
}

// WriteAt is Write with the time the bytes arrived, which settle uses to
// decide which lines stopped changing.
func (s *screen) WriteAt(b []byte, now time.Time) (int, error) {
	s.now = now
	n := len(b)
	// Only Advance changes the parser's state; asking it for every run of
	// text cost as much as handling the run.
	ground := s.p.State() == parser.GroundState
	// passLines is tried where a line starts (at the start of the write,
	// and after a line feed), and once per run of plain lines: until b is
	// shorter than passAt, the run it looked at has not been left yet.
	lineStart, passAt := true, len(b)
	for len(b) > 0 {
		if ground && lineStart {
			lineStart = false
			if len(b) <= passAt && s.atNewLine() {
				k, run := s.passLines(b)
				passAt = len(b) - max(run, 1)
				if k > 0 {
					b = b[k:]
					continue
				}
			}
		}
		s.unhold()
		if ground {
			// Fast path: runs of printable ASCII, the bulk of most output.
			i := 0
			for i < len(b) && b[i] >= 0x20 && b[i] < 0x7f {
				i++
			}
			if i > 0 {
				s.printASCII(b[:i])
				b = b[i:]
				continue
			}
			// Line ends, as the parser would execute them in this
			// state, without its dispatch: one pair per line of output.
			switch b[0] {
			case '\r':
				s.col = 0
				b = b[1:]
				continue
			case '\n':
				s.lineFeed()
				b = b[1:]
				lineStart = true
				continue
			}
			if k := s.plainOSC(b); k > 0 {
				b = b[k:]
				continue
			}
		}
		s.p.Advance(b[0])
		b = b[1:]
		ground = s.p.State() == parser.GroundState
	}
	s.touch()
	s.drain()
	return n, nil
}

// plainOSC handles an OSC sequence at the start of b that is whole, ends
// with BEL and holds only a number, ';' and printable ASCII, as the
// shell's markers do, and returns its length; 0 leaves b to the parser.
// The parser would take it byte by byte to the same call of osc, and
// every prompt carries a dozen markers.
func (s *screen) plainOSC(b []byte) int {
	if len(b) < 4 || b[0] != 0x1b || b[1] != ']' {
		return 0
	}
	cmd, digits := 0, 0
	for i := 2; i < len(b); i++ {
		c := b[i]
		switch {
		case digits >= 0 && c >= '0' && c <= '9':
			if digits++; digits > 9 {
				return 0
			}
			cmd = cmd*10 + int(c-'0')
		case digits > 0 && c == ';':
			digits = -1 // the number is complete; the rest is data
		case digits < 0 && c >= 0x20 && c < 0x7f:
		case digits < 0 && c == 0x07:
			data := b[2:i]
			if len(data) > oscDataMax {
				return 0
			}
			s.handleOSC(cmd, data)
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

// passLines hands the plain lines at the start of b ("text\r\n", the text
// printable ASCII or tabs) straight to the output when so many follow that
// they would scroll out of the live window. It returns how many bytes it
// took, and the length of the run of plain lines it looked at. Taking each
// line through the window was most of the cost of bulk output in short
// lines (seq, find, ls -1).
//
// It is for when atNewLine holds. The lines it passes would leave the
// window anyway, in the same order, after the lines above the cursor,
// which it finalizes first. The run's last screenLines-1 lines are held
// (see heldLines) when b ends with the run, or with the run and the start
// of one more plain line; otherwise they go through the window, so the
// window ends up as it would have.
func (s *screen) passLines(b []byte) (taken, run int) {
	run, n, tail := plainLines(b, s.held.partLen())
	run = max(run, 0)
	if s.held.empty() {
		if n+1 < screenLines {
			return 0, run
		}
		// Lines above the cursor all scroll out once a screenful follows.
		s.finalizeAbove(s.row)
	}
	pass := max(s.held.len()+n+1-screenLines, 0)
	fromHeld := min(pass, s.held.len())
	s.out = s.held.pop(s.out, fromHeld)
	if pass > fromHeld {
		// Lines of b scroll out too, the first one after its start held.
		s.out = s.held.popPart(s.out)
		for range pass - fromHeld {
			end := taken + bytes.IndexByte(b[taken:], '\r')
			s.out = append(s.out, b[taken:end]...)
			s.out = append(s.out, '\n')
			taken = end + 2
		}
	}
	s.savedRow -= pass // as if each line had been popped
	if rest := b[taken:]; tail && s.held.fits(rest, n-(pass-fromHeld)) {
		s.held.push(rest, s.now)
		return len(b), run
	}
	// The rest goes through the window, behind the lines held.
	s.unhold()
	return taken, run
}

// atNewLine reports whether the cursor is at the start of an empty last
// line, as after a line feed.
func (s *screen) atNewLine() bool {
	return s.col == 0 && s.row == len(s.lines)-1 && len(s.lines[s.row]) == 0
}

// plainLines returns the length of the plain lines at the start of b and
// their number. A plain line is printable ASCII or tabs, shorter than
// lineMaxRunes (so the window would not cut it), ended by "\r\n"; the
// first one continues part bytes written before b, and length is -part
// when that one does not end in b. tail reports that the rest of b is
// the start of one more such line.
func plainLines(b []byte, part int) (length, lines int, tail bool) {
	start, i := -part, 0
	for ; i < len(b); i++ {
		if c := b[i]; c >= 0x20 && c < 0x7f || c == '\t' {
			continue
		}
		if b[i] != '\r' || i+1 == len(b) || b[i+1] != '\n' || i-start >= lineMaxRunes {
			break
		}
		i++
		lines++
		start = i + 1
	}
	return start, lines, i == len(b)
}

// unhold takes the held lines into the window, as the window would have
// taken them when they were written. Everything that reads or changes the
// window, other than passLines, calls it first.
func (s *screen) unhold() {
	if !s.held.empty() { // inlined: the reader's loop asks at every step
		s.takeHeld()
	}
}

func (s *screen) takeHeld() {
	now := s.now
	start := 0
	for i, end := range s.held.ends {
		s.now = s.held.mod[i]
		s.printPlain(s.held.text[start : end-1])
		s.col = 0
		s.lineFeed()
		start = end
	}
	s.now = now
	s.printPlain(s.held.text[start:])
	s.held.text, s.held.ends, s.held.mod = s.held.text[:0], s.held.ends[:0], s.held.mod[:0]
	if cap(s.held.text) > maxKeptOut {
		s.held.text = nil // held long lines: do not keep their size
	}
}

// printPlain prints printable ASCII and tabs as the parser would.
func (s *screen) printPlain(b []byte) {
	for len(b) > 0 {
		k := bytes.IndexByte(b, '\t')
		if k < 0 {
			s.printASCII(b)
			return
		}
		if k > 0 {
			s.printASCII(b[:k])
		}
		s.print('\t')
		b = b[k+1:]
	}
}

// touch records that the cursor's line changed now. Lines the cursor
// visits are the only ones a program can change.
func (s *screen) touch() {
	if s.row >= 0 && s.row < len(s.mod) {
		s.mod[s.row] = s.now
	}
}

// settle finalizes the lines above the cursor that have not changed for
// quiet, oldest first: a slow command's lines reach readers of the
// finalized output promptly, while a display that keeps redrawing its lines
// keeps them live.
func (s *screen) settle(now time.Time, quiet time.Duration) {
	s.unhold()
	for s.row > 0 && now.Sub(s.mod[0]) >= quiet {
		s.popFirst()
	}
	s.drain()
}

func (s *screen) printASCII(b []byte) {
	line := s.lines[s.row]
	if s.col == len(line) {
		// Appending at the end of the line: no overwrite to consider.
		for len(b) > 0 {
			room := lineMaxRunes - len(line)
			if room <= 0 {
				s.lines[s.row] = line
				s.wrapLine()
				line = s.lines[s.row]
				continue
			}
			k := min(room, len(b))
			for _, c := range b[:k] {
				line = append(line, rune(c))
			}
			s.col += k
			s.liveSize += k
			b = b[k:]
		}
		s.lines[s.row] = line
		s.trim()
		return
	}
	for _, c := range b {
		s.print(rune(c))
	}
}

func (s *screen) print(r rune) {
	line := s.lines[s.row]
	if s.col >= lineMaxRunes {
		s.wrapLine()
		line = s.lines[s.row]
	}
	switch {
	case s.col < len(line):
		line[s.col] = r
	default:
		for len(line) < s.col {
			line = append(line, ' ')
			s.liveSize++
		}
		line = append(line, r)
		s.liveSize++
	}
	s.lines[s.row] = line
	s.col++
	s.trim()
}

// wrapLine finalizes the head of an over-long current line so that a line
// without newlines cannot grow memory. The cursor keeps its place in what is
// left.
func (s *screen) wrapLine() {
	// Everything above the cursor row must be final before the head of
	// this row can be.
	s.finalizeAbove(s.row)
	line := s.lines[0]
	cut := min(s.col, len(line))
	s.emit(line[:cut], false)
	rest := append([]rune(nil), line[cut:]...)
	s.liveSize -= cut
	s.lines[0] = rest
	s.col -= cut
}

func (s *screen) execute(b byte) {
	switch b {
	case '\r':
		s.col = 0
	case '\n', '\v', '\f':
		s.lineFeed()
	case '\b':
		if s.col > 0 {
			s.col--
		}
	case '\t':
		// Kept as a character: agents copy text (Makefiles, TSV) from
		// observations, and spaces would corrupt it.
		s.print('\t')
	}
}

func (s *screen) lineFeed() {
	s.touch()
	s.row++
	if s.row == len(s.lines) {
		if len(s.lines) == cap(s.lines) {
			s.compact()
		}
		var line []rune
		if n := len(s.spare); n > 0 {
			line, s.spare = s.spare[n-1], s.spare[:n-1]
		}
		s.lines = append(s.lines, line)
		s.mod = append(s.mod, s.now)
	}
	s.trim()
}

// trim finalizes lines that can no longer change: those that scrolled out of
// the window, and old ones when the window holds too many runes.
func (s *screen) trim() {
	for len(s.lines) > screenLines || (s.liveSize > screenMaxRunes && s.row > 0) {
		s.finalizeAbove(1)
	}
}

// finalizeAbove hands up to n of the live lines above the cursor to the
// sink, oldest first. The cursor's own line is never finalized here.
func (s *screen) finalizeAbove(n int) {
	for range n {
		if s.row == 0 {
			return
		}
		s.popFirst()
	}
}

func (s *screen) popFirst() {
	s.emit(s.lines[0], true)
	s.liveSize -= len(s.lines[0])
	// Keep ordinary-sized buffers for the lines to come: most output is
	// lines of similar length, and allocating each one dominated.
	if c := cap(s.lines[0]); c > 0 && c <= spareLineCap && len(s.spare) < screenLines {
		s.spare = append(s.spare, s.lines[0][:0])
	}
	s.lines[0] = nil
	s.lines = s.lines[1:]
	s.mod = s.mod[1:]
	s.row--
	s.savedRow--
}

// compact moves the live window back to the start of its arrays. popFirst
// slides the window forward through them, and letting append find them full
// would allocate new arrays every few lines: several times the bytes of
// the output itself in garbage.
func (s *screen) compact() {
	n := len(s.lines)
	if cap(s.linesArr) < 2*n {
		s.linesArr = make([][]rune, 0, max(2*n, 2*screenLines))
		s.modArr = make([]time.Time, 0, cap(s.linesArr))
	}
	// The window may lie inside linesArr already; append copies forward,
	// which is safe for an overlap that starts further on.
	s.lines = append(s.linesArr[:0], s.lines...)
	s.mod = append(s.modArr[:0], s.mod...)
	// Drop the stale copies behind the window, which would keep line
	// buffers alive.
	clear(s.linesArr[n:cap(s.linesArr)])
}

// emit queues finalized text for the sink; drain hands it over.
func (s *screen) emit(line []rune, newline bool) {
	// Most lines are ASCII: store those bytes directly, encode from the
	// first other rune on.
	n := len(s.out)
	s.out = slices.Grow(s.out, len(line)+1)[:n+len(line)]
	dst := s.out[n:]
	i := 0
	for i < len(line) && uint32(line[i]) < utf8.RuneSelf {
		dst[i] = byte(line[i])
		i++
	}
	s.out = s.out[:n+i]
	for _, r := range line[i:] {
		s.out = utf8.AppendRune(s.out, r)
	}
	if newline {
		s.out = append(s.out, '\n')
	}
}

// drain hands the finalized text queued by emit to the sink. Every entry
// point that can finalize text calls it before returning, so the sink sees
// text in the order, and under the routing, it had when emitted.
func (s *screen) drain() {
	if len(s.out) > 0 && s.sink != nil {
		s.sink(s.out)
	}
	s.out = s.out[:0]
	if cap(s.out) > maxKeptOut {
		// A flush of a large live window: do not keep its size.
		s.out = nil
	}
}

// flush finalizes every live line. The last line is emitted without a
// newline, so text split by flushes joins up again.
func (s *screen) flush() {
	s.unhold()
	for len(s.lines) > 1 {
		s.popFirst()
	}
	s.emit(s.lines[0], false)
	s.drain()
	s.mod[0] = time.Time{}
	s.lines[0] = s.lines[0][:0]
	s.liveSize = 0
	s.row, s.col = 0, 0
	s.savedRow, s.savedCol = 0, 0
}

// appendLive appends the live window's text to b, lines joined by '\n'.
func (s *screen) appendLive(b []byte) []byte {
	s.unhold()
	for i, line := range s.lines {
		if i > 0 {
			b = append(b, '\n')
		}
		for _, r := range line {
			b = utf8.AppendRune(b, r)
		}
	}
	return b
}

func (s *screen) csi(cmd ansi.Cmd, params ansi.Params) {
	if cmd.Prefix() != 0 || cmd.Intermediate() != 0 {
		return // private modes (?2004h ...) and the like change nothing visible
	}
	s.touch()
	defer s.touch()
	n := func(def int) int {
		v, _, _ := params.Param(0, def)
		if v < 1 {
			v = 1
		}
		return v
	}
	switch cmd.Final() {
	case 'A': // cursor up
		s.row = max(0, s.row-n(1))
	case 'B': // cursor down
		s.row = min(len(s.lines)-1, s.row+n(1))
	case 'C': // cursor forward
		s.col = min(lineMaxRunes-1, s.col+n(1))
	case 'D': // cursor back
		s.col = max(0, s.col-n(1))
	case 'E': // next line
		s.row = min(len(s.lines)-1, s.row+n(1))
		s.col = 0
	case 'F': // previous line
		s.row = max(0, s.row-n(1))
		s.col = 0
	case 'G', '`': // column absolute
		s.col = min(lineMaxRunes-1, n(1)-1)
	case 'H', 'f': // position: rows count from the top of the live window
		r, _, _ := params.Param(0, 1)
		c, _, _ := params.Param(1, 1)
		s.row = min(len(s.lines)-1, max(0, r-1))
		s.col = min(lineMaxRunes-1, max(0, c-1))
	case 'K': // erase in line
		mode, _, _ := params.Param(0, 0)
		s.eraseLine(mode)
	case 'J': // erase in display
		mode, _, _ := params.Param(0, 0)
		s.eraseDisplay(mode)
	}
}

func (s *screen) eraseLine(mode int) {
	line := s.lines[s.row]
	switch mode {
	case 0:
		if s.col < len(line) {
			s.liveSize -= len(line) - s.col
			s.lines[s.row] = line[:s.col]
		}
	case 1:
		for i := 0; i <= s.col && i < len(line); i++ {
			line[i] = ' '
		}
	case 2:
		s.liveSize -= len(line)
		s.lines[s.row] = line[:0]
	}
}

func (s *screen) eraseDisplay(mode int) {
	switch mode {
	case 0: // cursor to end
		s.eraseLine(0)
		for _, l := range s.lines[s.row+1:] {
			s.liveSize -= len(l)
		}
		s.lines = s.lines[:s.row+1]
		s.mod = s.mod[:s.row+1]
	case 1: // start to cursor
		for i := range s.row {
			s.liveSize -= len(s.lines[i])
			s.lines[i] = s.lines[i][:0]
		}
		s.eraseLine(1)
	case 2, 3: // whole screen, as `clear` does
		s.lines = s.lines[:1]
		s.mod = s.mod[:1]
		s.lines[0] = s.lines[0][:0]
		s.liveSize = 0
		s.row = 0
	}
}

func (s *screen) esc(cmd ansi.Cmd) {
	if cmd.Intermediate() != 0 {
		return
	}
	s.touch()
	defer s.touch()
	switch cmd.Final() {
	case '7': // save cursor
		s.savedRow, s.savedCol = s.row, s.col
	case '8': // restore cursor
		s.row = min(len(s.lines)-1, max(0, s.savedRow))
		s.col = s.savedCol
	case 'M': // reverse index
		s.row = max(0, s.row-1)
	case 'D', 'E': // index, next line
		if cmd.Final() == 'E' {
			s.col = 0
		}
		s.lineFeed()
	}
}
