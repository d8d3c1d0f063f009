package swerex

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/actionserver/actionserver/executor"
)

// A session's view of its command's output, as pexpect's buffer is
// upstream's: what the last wait consumed is never returned again, and
// the next wait starts where it stopped. Output is followed from that
// offset with the executor's Command.Follow, as every front end follows
// it; a match may end inside the live line (a prompt such as ">>> "
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

// follower is what a wait reads output through: executor.Command's
// Follow, which reports lost bytes, data, the live line and the end.
type follower interface {
	Follow(ctx context.Context, off int64, o executor.FollowOptions, emit func(executor.FollowEvent) bool)
}

// wait follows the command until a pattern matches the unconsumed output,
// the command finishes, the timeout passes (timeout <= 0: none) or ctx
// ends. A match or the end consumes the output it returns; a timeout
// consumes nothing.
func (cur *cursor) wait(ctx context.Context, timeout time.Duration, patterns []*regexp.Regexp) (waitResult, error) {
	return cur.waitOn(ctx, cur.cmd, timeout, patterns)
}

// waitOn is wait over f, which follows the cursor's command.
func (cur *cursor) waitOn(ctx context.Context, f follower, timeout time.Duration, patterns []*regexp.Regexp) (waitResult, error) {
	fctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		fctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	w := &waitState{cur: cur, patterns: patterns, accStart: cur.off, next: cur.off}
	f.Follow(fctx, cur.off, executor.FollowOptions{}, w.on)
	switch {
	case w.found:
		return w.result, nil
	case ctx.Err() != nil:
		return waitResult{}, ctx.Err()
	case fctx.Err() != nil:
		view, skip := w.view()
		return waitResult{}, &errWaitTimeout{partial: droppedNote(w.dropped) + view[skip:]}
	}
	return waitResult{}, errors.New("following the output stopped before the command ended")
}

// waitState is one wait's view of the output: the final output it keeps
// (at most maxWaitText), the live line after it, and how far the patterns
// were searched. Follow's events feed it; it searches whenever Follow has
// reported everything there is (FollowIdle) and at the end.
type waitState struct {
	cur      *cursor
	patterns []*regexp.Regexp
	final    []byte // final output from accStart, up to next
	accStart int64  // offset of final[0]
	next     int64  // offset just after final
	dropped  int64  // bytes between cur.off and accStart not kept
	searched int    // bytes of final searched for patterns already
	// tail is the live line after next. Follow reports it only when its
	// text changes, also across new output, so the last one reported is
	// the current one.
	tail   string
	found  bool
	result waitResult
}

// on takes one event of Follow; false stops following (a result is
// found).
func (w *waitState) on(ev executor.FollowEvent) bool {
	switch ev.Kind {
	case executor.FollowLost:
		w.skipTo(ev.To)
	case executor.FollowOutput:
		w.skipTo(ev.Offset)
		w.final = append(w.final, ev.Data...)
		w.next = ev.Next
		if over := len(w.final) - maxWaitText; over > 0 {
			w.final = append(w.final[:0], w.final[over:]...)
			w.accStart += int64(over)
			w.dropped += int64(over)
			w.searched = max(0, w.searched-over)
		}
	case executor.FollowTail:
		w.tail = ev.Tail
	case executor.FollowIdle:
		return !w.search(false)
	case executor.FollowExit:
		// A finished command has no live line: all of it is final.
		w.skipTo(ev.Next)
		w.tail = ""
		w.search(true)
		return false
	}
	return true
}

// skipTo moves the end of final to off, past output that was lost before
// it was read; the lost bytes count as dropped.
func (w *waitState) skipTo(off int64) {
	if gap := off - w.next; gap > 0 {
		w.accStart += gap
		w.dropped += gap
		w.next = off
	}
}

// view is the unconsumed output as the patterns see it, final output and
// live line, and where in it the part of the live line that an earlier
// match consumed ends (0 when there is none).
func (w *waitState) view() (view string, skip int) {
	view = string(w.final) + w.tail
	if w.accStart == w.cur.off && w.cur.tailSkip != "" && strings.HasPrefix(view, w.cur.tailSkip) {
		skip = len(w.cur.tailSkip)
	}
	return view, skip
}

// search looks for the patterns in what was not searched yet and, when
// one matches or the command is done, records the result and consumes its
// output; it reports whether it did.
func (w *waitState) search(done bool) bool {
	view, skip := w.view()
	from := max(skip, w.searched-searchOverlap)
	if idx, start, end := earliest(view[from:], w.patterns); idx >= 0 {
		start, end = start+from, end+from
		w.cur.consume(string(w.final), w.tail, end, w.next)
		w.found, w.result = true, waitResult{text: droppedNote(w.dropped) + view[skip:start], matched: idx}
		return true
	}
	w.searched = len(w.final)
	if done {
		w.cur.consume(string(w.final), "", len(w.final), w.next)
		w.found, w.result = true, waitResult{text: droppedNote(w.dropped) + view[skip:], matched: -1, done: true}
		return true
	}
	return false
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
