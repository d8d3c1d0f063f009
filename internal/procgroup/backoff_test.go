package procgroup

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBackoff_GrowsUntilARunIsStable(t *testing.T) {
	const (
		ms     = time.Millisecond
		stable = time.Minute
	)
	cases := []struct {
		name string
		runs []time.Duration // how long each run lasted before it ended
		want []time.Duration // the delay before each restart
	}{
		{"quick deaths double up to the cap",
			[]time.Duration{0, ms, 2 * ms, 0, 0, 0, 0, 0},
			[]time.Duration{500 * ms, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}},
		{"a successful but short run does not reset",
			[]time.Duration{0, 10 * time.Second, 10 * time.Second},
			[]time.Duration{500 * ms, time.Second, 2 * time.Second}},
		{"a stable run resets",
			[]time.Duration{0, 0, 0, stable, 0},
			[]time.Duration{500 * ms, time.Second, 2 * time.Second, 500 * ms, time.Second}},
		{"a first run that was stable starts at the minimum",
			[]time.Duration{time.Hour},
			[]time.Duration{500 * ms}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := Backoff{Min: 500 * ms, Max: 30 * time.Second, StableAfter: stable}
			var got []time.Duration
			for _, ran := range tc.runs {
				got = append(got, b.Next(ran))
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
