package shell

import (
	"bytes"
	"time"
)

// heldLines are plain lines kept out of the window, in the form the sink
// gets them ("text\n"), each with the time it was written, and maybe the
// start of the line the cursor is on (part). While a screen holds lines,
// its window is the cursor's line alone, empty, and the held lines stand
// for the lines above it and the text before the cursor. Whatever else
// comes takes them into the window first (unhold), so only passLines ever
// sees them.
type heldLines struct {
	text []byte // lines, then part
	ends []int  // where each line ends in text
	mod  []time.Time
}

func (h *heldLines) len() int     { return len(h.ends) }
func (h *heldLines) empty() bool  { return len(h.text) == 0 }
func (h *heldLines) partLen() int { return len(h.text) - h.lineBytes() }

func (h *heldLines) lineBytes() int {
	if len(h.ends) == 0 {
		return 0
	}
	return h.ends[len(h.ends)-1]
}

// fits reports whether b, lines whole plain lines ("text\r\n" each) and
// then maybe the start of one more, can be added while the window could
// still hold every held line without finalizing any early: fewer than a
// screenful, no more runes than it keeps, and a cursor line it would not
// cut. It also bounds the memory held lines take.
func (h *heldLines) fits(b []byte, lines int) bool {
	runes := len(h.text) - len(h.ends) + len(b) - 2*lines
	part := h.partLen() + len(b)
	if lines > 0 {
		part = len(b) - bytes.LastIndexByte(b, '\n') - 1
	}
	return len(h.ends)+lines < screenLines && runes <= screenMaxRunes && part < lineMaxRunes
}

// push adds b, plain lines ("text\r\n" each) and then maybe the start of
// one more, written at now.
func (h *heldLines) push(b []byte, now time.Time) {
	for {
		end := bytes.IndexByte(b, '\r')
		if end < 0 {
			h.text = append(h.text, b...)
			return
		}
		h.text = append(h.text, b[:end]...)
		h.text = append(h.text, '\n')
		h.ends = append(h.ends, len(h.text))
		h.mod = append(h.mod, now)
		b = b[end+2:]
	}
}

// popPart appends the start of a line held after the last whole one to
// out and drops it. It is for when no whole lines are held.
func (h *heldLines) popPart(out []byte) []byte {
	out = append(out, h.text...)
	h.text = h.text[:0]
	return out
}

// pop appends the oldest n lines to out and drops them.
func (h *heldLines) pop(out []byte, n int) []byte {
	if n == 0 {
		return out
	}
	cut := h.ends[n-1]
	out = append(out, h.text[:cut]...)
	h.text = h.text[:copy(h.text, h.text[cut:])]
	h.ends = h.ends[:copy(h.ends, h.ends[n:])]
	for i := range h.ends {
		h.ends[i] -= cut
	}
	h.mod = h.mod[:copy(h.mod, h.mod[n:])]
	return out
}
