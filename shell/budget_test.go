package shell

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOutputBudget_DropsTheOldestFinishedOutputFirst(t *testing.T) {
	// seq 1 20000 prints 108,894 bytes: three fit, four do not.
	const size = 108894
	budget := NewOutputBudget(3*size + size/2)
	var cmds []*Command
	for i := range 4 {
		s := newSession(t, func(o *Options) { o.Budget = budget })
		var c *Command
		var err error
		if i%2 == 0 {
			c, err = s.Start(context.Background(), "seq 1 20000")
		} else {
			c, err = s.StartPipe(context.Background(), "seq 1 20000", PipeOptions{})
		}
		require.NoError(t, err)
		waitDone(t, c)
		cmds = append(cmds, c)
	}
	require.Eventually(t, func() bool { return budget.Kept() <= 3*size+size/2 }, time.Minute, 5*time.Millisecond,
		"the budget is kept")

	first := cmds[0].Read(0, -1)
	assert.True(t, first.Done)
	assert.EqualValues(t, size, first.Lost, "the oldest output is dropped, and its reader told so")
	assert.Empty(t, first.Data)
	for _, c := range cmds[1:] {
		ch := c.Read(0, -1)
		assert.Zero(t, ch.Lost, "command %d keeps its output", c.ID)
		assert.Len(t, ch.Data, size)
	}
	assert.EqualValues(t, 3*size, budget.Kept())
}

func TestOutputBudget_RunningOutputIsNotCounted(t *testing.T) {
	budget := NewOutputBudget(1000)
	s := newSession(t, func(o *Options) { o.Budget = budget })
	c, err := s.StartPipe(context.Background(), "seq 1 20000; sleep 60", PipeOptions{})
	require.NoError(t, err)
	var ch Chunk
	for ch.Next < 108894 {
		changed := c.Changed()
		ch = c.Read(0, -1)
		if ch.Next < 108894 {
			<-changed
		}
	}
	assert.Zero(t, ch.Lost, "a running command keeps its output")
	assert.Zero(t, budget.Kept())
	require.NoError(t, s.SignalPipe(c.ID, 9))
	waitDone(t, c)
	require.Eventually(t, func() bool { return c.Read(0, -1).Lost > 0 }, time.Minute, 5*time.Millisecond,
		"once finished it is over the budget, and dropped")
}
