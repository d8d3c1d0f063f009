package swerex

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/executor"
)

// scripted follows a command that does not exist: each round is what
// Follow reports before it goes idle; after the last round it waits for
// ctx, unless a round ended with FollowExit.
type scripted struct {
	rounds [][]executor.FollowEvent
	from   int64 // the offset Follow was asked to start at
}

func (s *scripted) Follow(ctx context.Context, off int64, _ executor.FollowOptions, emit func(executor.FollowEvent) bool) {
	s.from = off
	for _, round := range s.rounds {
		for _, ev := range round {
			if !emit(ev) || ev.Kind == executor.FollowExit {
				return
			}
		}
		if !emit(executor.FollowEvent{Kind: executor.FollowIdle}) {
			return
		}
	}
	<-ctx.Done()
}

func output(off int64, data string) executor.FollowEvent {
	return executor.FollowEvent{Kind: executor.FollowOutput, Offset: off, Next: off + int64(len(data)), Data: data}
}

func tail(text string) executor.FollowEvent {
	return executor.FollowEvent{Kind: executor.FollowTail, Tail: text}
}

func exit(next int64) executor.FollowEvent {
	return executor.FollowEvent{Kind: executor.FollowExit, Next: next}
}

func lost(from, to int64) executor.FollowEvent {
	return executor.FollowEvent{Kind: executor.FollowLost, From: from, To: to, Lost: to - from}
}

func TestWait_PexpectSemanticsOverFollow(t *testing.T) {
	big := strings.Repeat("a", maxWaitText+10)
	tests := []struct {
		name     string
		start    cursor // off and tailSkip before the wait
		rounds   [][]executor.FollowEvent
		timeout  time.Duration
		patterns []string

		want        waitResult
		wantTimeout string // the partial text when the wait must time out
		wantOff     int64
		wantSkip    string
	}{
		{name: "a match in the live line consumes its start",
			rounds:   [][]executor.FollowEvent{{output(0, "x\n"), tail("abc> ")}},
			patterns: []string{"> "},
			want:     waitResult{text: "x\nabc", matched: 0}, wantOff: 2, wantSkip: "abc> "},
		{name: "then the line completes: its consumed start is not returned again",
			start:  cursor{off: 2, tailSkip: "abc> "},
			rounds: [][]executor.FollowEvent{{output(2, "abc> zz\n"), exit(10)}},
			want:   waitResult{text: "zz\n", matched: -1, done: true}, wantOff: 10},
		{name: "the line still live: only its new part is seen",
			start:    cursor{off: 2, tailSkip: "abc> "},
			rounds:   [][]executor.FollowEvent{{tail("abc> zz")}},
			patterns: []string{"z+"},
			want:     waitResult{text: "", matched: 0}, wantOff: 2, wantSkip: "abc> zz"},
		{name: "a live line of the same text after new output is still the live line",
			rounds:   [][]executor.FollowEvent{{tail("$ ")}, {output(0, "$ a\n")}},
			patterns: []string{`a\n\$ `},
			want:     waitResult{text: "$ ", matched: 0}, wantOff: 4, wantSkip: "$ "},
		{name: "a completed live line is no longer searched as live",
			rounds:   [][]executor.FollowEvent{{tail("pro")}, {output(0, "prompt\n"), tail("")}},
			patterns: []string{`prompt\n`},
			want:     waitResult{text: "", matched: 0}, wantOff: 7},
		{name: "the earliest match wins, the first listed on a tie",
			rounds:   [][]executor.FollowEvent{{output(0, "one two\n")}},
			patterns: []string{"two", "o", "one"},
			want:     waitResult{text: "", matched: 1}, wantOff: 1},
		{name: "a timeout consumes nothing and says what was there",
			rounds:      [][]executor.FollowEvent{{output(0, "one\n"), tail("two")}},
			timeout:     50 * time.Millisecond,
			patterns:    []string{"never"},
			wantTimeout: "one\ntwo", wantOff: 0},
		{name: "a timeout after a match in the live line keeps its skip",
			start:       cursor{off: 2, tailSkip: "abc> "},
			rounds:      [][]executor.FollowEvent{{tail("abc> zz")}},
			timeout:     50 * time.Millisecond,
			wantTimeout: "zz", wantOff: 2, wantSkip: "abc> "},
		{name: "done without a match returns everything",
			rounds:   [][]executor.FollowEvent{{output(0, "a\n"), tail("b")}, {output(2, "b\n"), exit(4)}},
			patterns: []string{"zzz"},
			want:     waitResult{text: "a\nb\n", matched: -1, done: true}, wantOff: 4},
		{name: "a match at the end wins over done",
			rounds:   [][]executor.FollowEvent{{output(0, "ready\nbye\n"), exit(10)}},
			patterns: []string{"ready"},
			want:     waitResult{text: "", matched: 0}, wantOff: 5},
		{name: "more than the wait keeps gets the dropped note",
			rounds:  [][]executor.FollowEvent{{output(0, big)}, {output(int64(len(big)), "end\n"), exit(int64(len(big)) + 4)}},
			want:    waitResult{text: droppedNote(14) + big[14:] + "end\n", matched: -1, done: true},
			wantOff: int64(len(big)) + 4},
		{name: "lost output counts as dropped",
			rounds: [][]executor.FollowEvent{{lost(0, 100), output(100, "end\n"), exit(104)}},
			want:   waitResult{text: droppedNote(100) + "end\n", matched: -1, done: true}, wantOff: 104},
		{name: "a match is found across reads",
			rounds:   [][]executor.FollowEvent{{output(0, "abc")}, {output(3, "def\n")}},
			patterns: []string{"cd"},
			want:     waitResult{text: "ab", matched: 0}, wantOff: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := tt.start
			f := &scripted{rounds: tt.rounds}
			r, err := cur.waitOn(context.Background(), f, tt.timeout, compileExpect(tt.patterns))
			assert.Equal(t, tt.start.off, f.from, "follows from the consumed offset")
			if tt.wantTimeout != "" {
				var tmo *errWaitTimeout
				require.ErrorAs(t, err, &tmo)
				assert.Equal(t, tt.wantTimeout, tmo.partial)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.want, r)
			}
			assert.Equal(t, tt.wantOff, cur.off, "consumed up to")
			assert.Equal(t, tt.wantSkip, cur.tailSkip, "consumed of the live line")
		})
	}
}

func TestWait_CallersContextEndingIsNotATimeout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var cur cursor
	f := &scripted{rounds: [][]executor.FollowEvent{{output(0, "one\n")}}}
	_, err := cur.waitOn(ctx, f, time.Hour, nil)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, cur.off)
}

// The same over a real shell: a prompt without a newline matches in the
// live line, and once the line completes the next wait does not return
// the prompt again.
func TestWait_PromptInTheLiveLineThenTheLineCompletes(t *testing.T) {
	dir := t.TempDir()
	e, err := executor.New(context.Background(), executor.Options{
		WorkDir: dir,
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir},
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		e.Close(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	es, err := e.CreateSession(ctx, executor.SessionOptions{})
	require.NoError(t, err)
	c, err := es.Start(ctx, `echo first; read -p 'name> ' n; echo "hi $n"`)
	require.NoError(t, err)
	cur := &cursor{cmd: c}

	r, err := cur.wait(ctx, 5*time.Second, []*regexp.Regexp{regexp.MustCompile(`name> `)})
	require.NoError(t, err)
	assert.Equal(t, waitResult{text: "first\n", matched: 0}, r)
	// The live text may hold more than one line until the engine makes
	// it final; the prompt ends what the match consumed of it.
	assert.True(t, strings.HasSuffix(cur.tailSkip, "name> "), "%q", cur.tailSkip)

	_, err = cur.wait(ctx, 100*time.Millisecond, []*regexp.Regexp{regexp.MustCompile(`never`)})
	var tmo *errWaitTimeout
	require.ErrorAs(t, err, &tmo)
	assert.Equal(t, "", tmo.partial, "the consumed prompt is not shown again")

	require.NoError(t, es.Input("bob", true))
	r, err = cur.wait(ctx, 5*time.Second, nil)
	require.NoError(t, err)
	assert.True(t, r.done)
	assert.Equal(t, "bob\nhi bob\n", r.text)
}
