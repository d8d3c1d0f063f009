package procgroup

import "time"

// Backoff is the restart delay of a supervised child process. Each restart
// waits twice as long as the one before, up to Max, so a process that dies
// as soon as it starts is not restarted in a tight loop; a run that stayed
// up for StableAfter counts as healthy and starts the delays again from
// Min. The zero value is not useful; set all three fields.
type Backoff struct {
	Min, Max    time.Duration
	StableAfter time.Duration

	next time.Duration // zero until the first Next
}

// Next returns how long to wait before starting the process again after a
// run that lasted ran; a launch that failed before the process was up
// counts as a run of zero.
func (b *Backoff) Next(ran time.Duration) time.Duration {
	if b.next == 0 || ran >= b.StableAfter {
		b.next = b.Min
	}
	d := b.next
	b.next = min(2*b.next, b.Max)
	return d
}
