package shell

import (
	"sync"
	"sync/atomic"
	"weak"
)

// OutputBudget bounds the output that finished commands keep, across all
// the sessions that share it (Options.Budget). Each command keeps up to
// OutputLimit while it runs, and a session some of its predecessors'; with
// many sessions that adds up (64 sessions holding 7 MB each are 450 MB).
// Once the finished commands' output exceeds the budget, the oldest
// finished output is dropped first: readers of it are told the bytes were
// dropped, as for output that overflowed its buffer. Output of running
// commands is not counted, and never dropped by the budget.
type OutputBudget struct {
	limit    int64
	produced atomic.Int64 // output of every finished command, kept or not

	mu       sync.Mutex
	finished []budgetEntry // oldest first
	total    int64         // bytes recorded in finished
	dropping bool          // a drop is under way (see drop)
}

type budgetEntry struct {
	cmd  weak.Pointer[Command] // gone once its session forgot it
	size int64
}

// NewOutputBudget returns a budget of limit bytes; limit <= 0 means none.
func NewOutputBudget(limit int64) *OutputBudget {
	return &OutputBudget{limit: limit}
}

// add records a command that just finished, keeping size bytes. It may be
// called with c.mu held, so it never takes another command's lock
// itself: dropping runs on its own goroutine.
func (b *OutputBudget) add(c *Command, size int) {
	spillLater(c)
	if b == nil {
		return
	}
	b.produced.Add(c.out.total)
	if b.limit <= 0 || size == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.finished = append(b.finished, budgetEntry{weak.Make(c), int64(size)})
	b.total += int64(size)
	if len(b.finished) > 1024 {
		b.compact()
	}
	if b.total > b.limit && !b.dropping {
		b.dropping = true
		go b.drop()
	}
}

// compact forgets entries of commands no longer there. Called with mu held.
func (b *OutputBudget) compact() {
	kept := b.finished[:0]
	for _, e := range b.finished {
		if e.cmd.Value() == nil {
			b.total -= e.size
			continue
		}
		kept = append(kept, e)
	}
	clear(b.finished[len(kept):])
	b.finished = kept
}

// drop releases the oldest finished output until the total fits.
func (b *OutputBudget) drop() {
	for {
		b.mu.Lock()
		if b.total <= b.limit || len(b.finished) == 0 {
			b.dropping = false
			b.mu.Unlock()
			return
		}
		e := b.finished[0]
		b.finished[0] = budgetEntry{}
		b.finished = b.finished[1:]
		b.total -= e.size
		b.mu.Unlock()
		if c := e.cmd.Value(); c != nil {
			c.mu.Lock()
			c.out.release()
			c.mu.Unlock()
		}
	}
}

// Produced reports the bytes of output every finished command printed,
// including those dropped since.
func (b *OutputBudget) Produced() int64 { return b.produced.Load() }

// Kept reports the bytes of finished output the budget counts now.
func (b *OutputBudget) Kept() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}
