package shell

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ringSizes are the limits and storage block sizes the ring tests cover:
// one block or many, a last block shorter than the others or not.
var ringSizes = []struct{ limit, block int }{
	{1, ringBlock}, {7, ringBlock}, {4096, ringBlock}, {10000, ringBlock},
	{7, 1}, {7, 3}, {4096, 1000}, {5000, 1000}, {10000, 4096},
}

func TestRing_MatchesReference(t *testing.T) {
	for _, sz := range ringSizes {
		limit := sz.limit
		r := newRing(limit)
		r.block = sz.block
		var all []byte
		rng := rand.New(rand.NewPCG(uint64(limit), uint64(sz.block)))
		for i := range 500 {
			n := rng.IntN(3 * limit / 2)
			chunk := make([]byte, n)
			for j := range chunk {
				chunk[j] = byte(i + j)
			}
			r.Write(chunk)
			all = append(all, chunk...)

			kept := all
			if len(kept) > limit {
				kept = kept[len(kept)-limit:]
			}
			require.EqualValues(t, len(all), r.total)
			require.LessOrEqual(t, r.room, limit, "storage never exceeds the limit")
			got, lost := r.ReadFrom(0, -1)
			require.Equal(t, string(kept), string(got), "limit %d block %d write %d", limit, sz.block, i)
			require.EqualValues(t, len(all)-len(kept), lost)

			off := rng.Int64N(int64(len(all)) + 1)
			got, lost = r.ReadFrom(off, -1)
			start := int64(len(all) - len(kept))
			wantLost := max(0, start-off)
			from := max(off, start)
			assert.Equal(t, string(all[from:]), string(got))
			assert.Equal(t, wantLost, lost)
		}
	}
}

func TestRing_ReadFromLimitsAndEnd(t *testing.T) {
	r := newRing(100)
	r.Write([]byte("hello world"))
	got, lost := r.ReadFrom(6, 3)
	assert.Equal(t, "wor", string(got))
	assert.Zero(t, lost)
	got, _ = r.ReadFrom(50, -1)
	assert.Empty(t, got, "past the end")
}

func TestRing_LineStartMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, sz := range ringSizes {
		limit := sz.limit
		r := newRing(limit)
		r.block = sz.block
		var all []byte
		for i := range 300 {
			chunk := make([]byte, rng.IntN(limit+limit/2+1))
			for j := range chunk {
				chunk[j] = "ab\n"[rng.IntN(3)]
			}
			r.Write(chunk)
			all = append(all, chunk...)
			kept, start := all, int64(0)
			if len(kept) > limit {
				kept, start = kept[len(kept)-limit:], int64(len(all)-limit)
			}
			for _, n := range []int{0, 1, 2, 3, 10, limit / 2, limit} {
				// The reference: lastLines on the text kept.
				want := int64(len(all))
				if n > 0 {
					tail, _ := lastLines(string(kept), n, false)
					want = start + int64(len(kept)-len(tail))
				}
				require.Equal(t, want, r.lineStart(n), "limit %d block %d write %d n %d", limit, sz.block, i, n)
			}
		}
	}
}
