package ohrun

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The pieces of wait take the time as an argument, so these tests step
// through their deadlines without a shell or a sleep.

// never stands for the zero time in the expectations below.
const never = time.Duration(-1)

// at returns start+d, or the zero time for never.
func at(start time.Time, d time.Duration) time.Time {
	if d == never {
		return time.Time{}
	}
	return start.Add(d)
}

func TestTimeouts_CheckEndsTheWaitAtTheFirstDeadline(t *testing.T) {
	start := time.Unix(1000, 0)
	tests := []struct {
		name       string
		to         timeouts
		now        time.Duration
		lastOutput time.Duration // since start; negative is before it
		suffix     string
		next       time.Duration
	}{
		{name: "quiet since the start", to: timeouts{quiet: 2 * time.Second, noChange: 2 * time.Second},
			now: time.Second, lastOutput: -time.Minute, next: 2 * time.Second},
		{name: "output moves the no-change deadline", to: timeouts{quiet: 2 * time.Second, noChange: 2 * time.Second},
			now: 2 * time.Second, lastOutput: time.Second, next: 3 * time.Second},
		{name: "no change tells the setting, not the longer wait after a key", to: timeouts{quiet: keyQuiet, noChange: time.Second},
			now: keyQuiet, lastOutput: -time.Minute, suffix: suffixNoChange("1"), next: never},
		{name: "fractional no-change setting", to: timeouts{quiet: 1500 * time.Millisecond, noChange: 1500 * time.Millisecond},
			now: 2 * time.Second, lastOutput: 0, suffix: suffixNoChange("1.5"), next: never},
		{name: "blocking and no hard timeout waits for ever", to: timeouts{noChange: time.Second},
			now: time.Hour, lastOutput: 0, next: never},
		{name: "hard timeout before the no-change one", to: timeouts{quiet: 10 * time.Second, noChange: 10 * time.Second, hard: 5 * time.Second},
			now: time.Second, lastOutput: 0, next: 5 * time.Second},
		{name: "hard timeout passed", to: timeouts{quiet: 10 * time.Second, noChange: 10 * time.Second, hard: 5 * time.Second},
			now: 5 * time.Second, lastOutput: 4 * time.Second, suffix: suffixHardTimeout("5.0"), next: never},
		{name: "no change goes before the hard timeout", to: timeouts{quiet: 5 * time.Second, noChange: 5 * time.Second, hard: 5 * time.Second},
			now: 5 * time.Second, lastOutput: 0, suffix: suffixNoChange("5"), next: never},
		{name: "blocking with a hard timeout", to: timeouts{noChange: time.Second, hard: 30 * time.Second},
			now: 20 * time.Second, lastOutput: 0, next: 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.to.start = start
			suffix, next := tt.to.check(start.Add(tt.now), start.Add(tt.lastOutput))
			assert.Equal(t, tt.suffix, suffix)
			assert.True(t, at(start, tt.next).Equal(next), "next %v, want %v", next, at(start, tt.next))
		})
	}
}

func TestRunner_TimeoutsOfARequest(t *testing.T) {
	r := &Runner{opts: Options{NoChangeTimeout: time.Second}}
	long := &Runner{opts: Options{NoChangeTimeout: 10 * time.Second}}
	tests := []struct {
		name  string
		r     *Runner
		req   Request
		quiet time.Duration
		hard  time.Duration
	}{
		{name: "command", r: r, req: Request{Command: "ls", Timeout: 5 * time.Second}, quiet: time.Second, hard: 5 * time.Second},
		{name: "key waits at least keyQuiet", r: r, req: Request{Command: "C-c", IsInput: true}, quiet: keyQuiet},
		{name: "key keeps a longer setting", r: long, req: Request{Command: "C-d", IsInput: true}, quiet: 10 * time.Second},
		{name: "blocking", r: r, req: Request{Command: "ls", Blocking: true}, quiet: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Unix(1000, 0)
			to := tt.r.timeouts(start, tt.req, tt.req.Command)
			assert.Equal(t, timeouts{start: start, quiet: tt.quiet, noChange: tt.r.opts.NoChangeTimeout, hard: tt.hard}, to)
		})
	}
}

// fakeTerminal is a terminal whose foreground job and last output a test
// sets, and which counts the Ctrl-Cs written to it.
type fakeTerminal struct {
	fg         int
	fgErr      error
	lastOutput time.Time
	ctrlCs     int
}

func (f *fakeTerminal) Write(b []byte) error {
	for _, c := range b {
		if c == ctrlC {
			f.ctrlCs++
		}
	}
	return nil
}
func (f *fakeTerminal) Foreground() (int, error) { return f.fg, f.fgErr }
func (f *fakeTerminal) ShellPID() int            { return 10 }
func (f *fakeTerminal) LastOutput() time.Time    { return f.lastOutput }

func TestInterrupter_SendsCtrlCAgainWhenTheFirstLooksLost(t *testing.T) {
	// step is one call of act: the terminal as it is then, and what act
	// should have sent so far and return.
	type step struct {
		at      time.Duration
		fg      int
		printed time.Duration // when the terminal last printed, since the start
		ctrlCs  int
		next    time.Duration
	}
	const ms = time.Millisecond
	tests := []struct {
		name  string
		fg    int
		fgErr error
		steps []step
	}{
		{name: "the same job and no output: nothing", fg: 100, steps: []step{
			{at: 0, fg: 100, next: 500 * ms},
			{at: 500 * ms, fg: 100, next: 1000 * ms},
			{at: 1000 * ms, fg: 100, next: 1500 * ms},
			{at: 1500 * ms, fg: 100, next: 2000 * ms},
			{at: 2000 * ms, fg: 100, next: 2500 * ms},
		}},
		{name: "an early wake-up does nothing", fg: 100, steps: []step{
			{at: 200 * ms, fg: 101, next: 500 * ms},
		}},
		{name: "a new job each look: three more at most", fg: 100, steps: []step{
			{at: 500 * ms, fg: 101, ctrlCs: 1, next: 1000 * ms},
			{at: 1000 * ms, fg: 101, ctrlCs: 1, next: 1500 * ms},
			{at: 1500 * ms, fg: 102, ctrlCs: 2, next: 2000 * ms},
			{at: 2100 * ms, fg: 103, ctrlCs: 3, next: never},
			{at: 5000 * ms, fg: 104, ctrlCs: 3, next: never},
		}},
		{name: "the shell back in the foreground is no new job", fg: 100, steps: []step{
			{at: 500 * ms, fg: 10, next: 1000 * ms},
		}},
		{name: "an unknown foreground is no new job", fg: 100, fgErr: errors.New("no tty"), steps: []step{
			{at: 500 * ms, fg: 101, next: 1000 * ms},
		}},
		{name: "output past the echo: once more", steps: []step{
			{at: 0, next: 1500 * ms},
			{at: 1500 * ms, printed: 1400 * ms, ctrlCs: 1, next: never},
			{at: 3000 * ms, printed: 2900 * ms, ctrlCs: 1, next: never},
		}},
		{name: "only the echo printed", steps: []step{
			{at: 1500 * ms, printed: interruptEcho, next: never},
		}},
		{name: "late wake-up looks once", steps: []step{
			{at: 4000 * ms, printed: 3000 * ms, ctrlCs: 1, next: never},
		}},
		{name: "both: the foreground first, then the output", fg: 100, steps: []step{
			{at: 1500 * ms, fg: 101, printed: 1000 * ms, ctrlCs: 2, next: 2000 * ms},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Unix(1000, 0)
			term := &fakeTerminal{fgErr: tt.fgErr}
			in := newInterrupter(term, start, tt.fg)
			for i, s := range tt.steps {
				term.fg, term.lastOutput = s.fg, start.Add(s.printed)
				next := in.act(start.Add(s.at))
				require.Equal(t, s.ctrlCs, term.ctrlCs, "step %d: Ctrl-Cs sent", i)
				require.True(t, at(start, s.next).Equal(next), "step %d: next %v, want %v", i, next, at(start, s.next))
			}
		})
	}
}

func TestInterrupter_ZeroValueNeverActs(t *testing.T) {
	var in interrupter
	assert.True(t, in.act(time.Now()).IsZero())
}

func TestEarliest(t *testing.T) {
	a, b := time.Unix(1, 0), time.Unix(2, 0)
	tests := []struct {
		name       string
		x, y, want time.Time
	}{
		{name: "earlier first", x: a, y: b, want: a},
		{name: "earlier second", x: b, y: a, want: a},
		{name: "never and a time", x: time.Time{}, y: b, want: b},
		{name: "a time and never", x: a, y: time.Time{}, want: a},
		{name: "never", want: time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, earliest(tt.x, tt.y))
		})
	}
}
