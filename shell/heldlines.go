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

// fits reports whether the window could hold these lines without
// finalizing any of them early: fewer than a screenful, no more runes than
// it keeps, and a cursor line it would not cut.
func (h *heldLines) fits() bool {
	return len(h.ends) < screenLines && len(h.text)-len(h.ends) <= screenMaxRunes && h.partLen() < lineMaxRunes
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
