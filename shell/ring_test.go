package shell

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRing_MatchesReference(t *testing.T) {
	for _, limit := range []int{1, 7, 4096, 5000, 10000} {
		r := newRing(limit)
		var all []byte
		rng := rand.New(rand.NewPCG(uint64(limit), 1))
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
			got, lost := r.ReadFrom(0, -1)
			require.Equal(t, string(kept), string(got), "limit %d write %d", limit, i)
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
