package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressMin is the size from which a transfer shows progress.
const progressMin = 4 << 20

// progress shows a transfer on one self-updating line of standard error,
// and only when that is a terminal and the transfer is large: scripts,
// pipes and small files see nothing.
type progress struct {
	mu    sync.Mutex
	w     io.Writer // nil: nothing is shown
	bar   *progressbar.ProgressBar
	shown bool
}

// newProgress returns the progress of a transfer of total bytes, 0 when the
// total is not known.
func (a *app) newProgress(label string, total int64) *progress {
	f, ok := a.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return &progress{}
	}
	return newProgressTo(f, label, total)
}

// newProgressTo draws on w, terminal or not.
func newProgressTo(w io.Writer, label string, total int64) *progress {
	if total <= 0 {
		total = -1 // a spinner with the bytes so far
	}
	// The bar starts now, so that its rate counts from the transfer's start,
	// but draws nothing before the first update past progressMin.
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(20),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
	return &progress{w: w, bar: bar}
}

// update is told the bytes transferred so far.
func (p *progress) update(n int64) {
	if p.w == nil || n < progressMin {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shown = true
	p.bar.Set64(n)
}

// done ends the line, if one was drawn: full after a success, where it
// stopped after a failure (whose error is printed next).
func (p *progress) done(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.shown {
		return
	}
	if err != nil {
		p.bar.Exit()
		return
	}
	p.bar.Finish()
}
