package executor

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/shell"
)

// followAll follows cmd from 0 and returns its events, stopping after the
// first FollowTail when stopAtTail is set.
func followAll(t *testing.T, cmd *Command, chunk int, stopAtTail bool) []FollowEvent {
	t.Helper()
	var evs []FollowEvent
	cmd.Follow(ctxT(t), 0, FollowOptions{Chunk: chunk}, func(e FollowEvent) bool {
		if e.Kind == FollowIdle {
			return true
		}
		evs = append(evs, e)
		return !(stopAtTail && e.Kind == FollowTail)
	})
	return evs
}

func kinds(evs []FollowEvent) []FollowKind {
	out := make([]FollowKind, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

func TestFollow_ReportsLostThenDataThenTailOrExit(t *testing.T) {
	const limit = 4096
	e, err := New(context.Background(), Options{
		WorkDir: t.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()},
		Shell:   shell.Options{OutputLimit: limit},
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		e.Close(ctx)
	})
	sess, err := e.CreateSession(ctxT(t), SessionOptions{ID: "f"})
	require.NoError(t, err)

	tests := []struct {
		name       string
		command    string
		waitDone   bool // follow only once the command is done
		stopAtTail bool
		want       []FollowKind
		check      func(t *testing.T, evs []FollowEvent)
	}{
		{
			name:     "output the shell dropped is reported before the data",
			command:  "seq 1 5000", // about 24 KB, six times what is kept
			waitDone: true,
			want:     []FollowKind{FollowLost, FollowOutput, FollowExit},
			check: func(t *testing.T, evs []FollowEvent) {
				lost, out := evs[0], evs[1]
				assert.Equal(t, int64(0), lost.From)
				assert.Equal(t, out.Offset, lost.To, "the data starts where the loss ends")
				assert.Equal(t, lost.To-lost.From, lost.Lost)
				assert.Contains(t, out.Data, "5000\n")
				assert.Equal(t, out.Next, evs[2].Next)
			},
		},
		{
			name:       "a live line is a tail while the command goes on",
			command:    "printf 'no newline yet'; sleep 30",
			stopAtTail: true,
			want:       []FollowKind{FollowTail},
			check: func(t *testing.T, evs []FollowEvent) {
				assert.Equal(t, "no newline yet", evs[0].Tail)
			},
		},
		{
			name:     "exit is the last event, after all the data",
			command:  "echo one; echo two",
			waitDone: true,
			want:     []FollowKind{FollowOutput, FollowExit},
			check: func(t *testing.T, evs []FollowEvent) {
				assert.Equal(t, "one\ntwo\n", evs[0].Data)
				assert.Equal(t, int64(len("one\ntwo\n")), evs[1].Next)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, err := sess.Start(ctxT(t), tt.command)
			require.NoError(t, err)
			if tt.waitDone {
				select {
				case <-cmd.Done():
				case <-ctxT(t).Done():
					require.Fail(t, "the command did not finish")
				}
			}
			evs := followAll(t, cmd, MaxOutputChunk, tt.stopAtTail)
			require.Equal(t, tt.want, kinds(evs))
			tt.check(t, evs)
			if !tt.waitDone {
				require.NoError(t, sess.Key("C-c"))
				<-cmd.Done()
			}
		})
	}
}
