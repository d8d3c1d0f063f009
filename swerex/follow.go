package swerex

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/actionserver/actionserver/executor"
)

// A session's view of its command's output, as pexpect's buffer is
// upstream's: what the last wait consumed is never returned again, and
// the next wait starts where it stopped. Output is read by offset from the
// engine; a match may end inside the live line (a prompt such as ">>> "
// that has no newline yet), so the consumed part of that line is kept as
// text and skipped once the line becomes final.
type cursor struct {
	cmd      *executor.Command
	off      int64  // final output consumed up to here
	tailSkip string // the live line's consumed start, not yet final at off
	since    uint64 // clock tick the command started at (see clockTicks)
}

// waitResult is what a wait saw.
type waitResult struct {
	text    string // unconsumed output before the match, or all of it
	matched int    // index of the expect pattern that matched, or -1
	done    bool   // the command finished (and no pattern matched first)
}

// errWaitTimeout reports that the deadline passed first; the text read so
// far is in partial.
type errWaitTimeout struct{ partial string }

func (e *errWaitTimeout) Error() string { return "timed out" }

// compileExpect turns expect strings into patterns: they are regular
// expressions upstream (pexpect compiles them); one that RE2 cannot compile
// is matched literally instead of failing the command.
func compileExpect(expect []string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, 0, len(expect))
	for _, e := range expect {
		re, err := regexp.Compile(e)
		if err != nil {
			re = regexp.MustCompile(regexp.QuoteMeta(e))
		}
		out = append(out, re)
	}
	return out
}

// Bounds of what one wait holds and searches. A command may print without
// end while a wait follows it: only the last maxWaitText bytes are kept
// (the text then says how much was dropped), and each change is searched
// for the patterns from searchOverlap bytes before what was searched
// already, not from the start.
const (
	maxWaitText   = 8 << 20
	searchOverlap = 4 << 10
)

// wait follows the command until a pattern matches the unconsumed output,
// the command finishes, the timeout passes (timeout <= 0: none) or ctx
// ends. A match or the end consumes the output it returns; a timeout
// consumes nothing.
func (cur *cursor) wait(ctx context.Context, timeout time.Duration, patterns []*regexp.Regexp) (waitResult, error) {
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	var final []byte    // final output from accStart, up to next
	accStart := cur.off // offset of final[0]
	next := cur.off     // offset just after final
	var dropped int64   // bytes between cur.off and accStart not kept
	searched := 0       // bytes of final searched for patterns already
	for {
		changed := cur.cmd.Changed()
		var tail string
		done := false
		for {
			ch := cur.cmd.Read(next, executor.MaxOutputChunk)
			final = append(final, ch.Data...)
			next, tail, done = ch.NextOffset, ch.Tail, ch.Done
			if over := len(final) - maxWaitText; over > 0 {
				final = append(final[:0], final[over:]...)
				accStart += int64(over)
				dropped += int64(over)
				searched = max(0, searched-over)
			}
			if ch.Data == "" || done {
				break
			}
		}
		// A dropped start or a lost stretch leaves the offsets apart from
		// final's length; what was lost counts as dropped.
		if gap := next - accStart - int64(len(final)); gap > 0 {
			accStart += gap
			dropped += gap
		}
		view := string(final) + tail
		skip := 0
		if accStart == cur.off && cur.tailSkip != "" && strings.HasPrefix(view, cur.tailSkip) {
			skip = len(cur.tailSkip)
		}
		from := max(skip, searched-searchOverlap)
		if idx, start, end := earliest(view[from:], patterns); idx >= 0 {
			start, end = start+from, end+from
			text := view[skip:start]
			cur.consume(string(final), tail, end, next)
			return waitResult{text: droppedNote(dropped) + text, matched: idx}, nil
		}
		searched = len(final)
		if done {
			cur.consume(string(final), "", len(final), next)
			return waitResult{text: droppedNote(dropped) + view[skip:], matched: -1, done: true}, nil
		}
		select {
		case <-changed:
		case <-deadline:
			return waitResult{}, &errWaitTimeout{partial: droppedNote(dropped) + view[skip:]}
		case <-ctx.Done():
			return waitResult{}, ctx.Err()
		}
	}
}

// droppedNote says how much output a wait could not keep.
func droppedNote(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("[%d bytes of output were dropped here: the server keeps the last %d]\n", n, maxWaitText)
}

// consume marks everything up to end (a position in final+tail) as seen;
// next is the offset just after final.
func (cur *cursor) consume(final, tail string, end int, next int64) {
	if end <= len(final) {
		cur.off = next - int64(len(final)-end)
		cur.tailSkip = ""
		return
	}
	cur.off = next
	cur.tailSkip = tail[:end-len(final)]
}

// earliest returns the pattern whose match starts first in text (the
// first listed on a tie, as pexpect picks), and where it matched; -1 when
// none does.
func earliest(text string, patterns []*regexp.Regexp) (idx, start, end int) {
	idx = -1
	for i, re := range patterns {
		loc := re.FindStringIndex(text)
		if loc != nil && (idx < 0 || loc[0] < start) {
			idx, start, end = i, loc[0], loc[1]
		}
	}
	return idx, start, end
}
