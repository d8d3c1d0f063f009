package freeport

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPick_OutsideEphemeralRangeAndListenable(t *testing.T) {
	lo, hi := ephemeralRange()
	for range 20 {
		port, err := Pick("127.0.0.1")
		require.NoError(t, err)
		assert.True(t, port < lo || port > hi, "port %d is in the ephemeral range %d-%d", port, lo, hi)
		assert.GreaterOrEqual(t, port, lowest)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		require.NoError(t, err, "the picked port cannot be listened on")
		l.Close()
	}
}

func TestOutside(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi int
		want   []span
	}{
		{"linux default", 32768, 60999, []span{{61000, 65535}, {lowest, 32767}}},
		{"range up to the top", 32768, 65535, []span{{lowest, 32767}}},
		{"whole range", 1024, 65535, nil},
		{"range below lowest", 2000, 5000, []span{{lowest, 65535}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, outside(tt.lo, tt.hi))
		})
	}
}

func TestPick_SkipsABusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	p := busy.Addr().(*net.TCPAddr).Port

	// The only candidate is taken, so the kernel's choice is returned.
	got, err := pick("127.0.0.1", []span{{p, p}})
	require.NoError(t, err)
	assert.NotEqual(t, p, got)

	got, err = pick("127.0.0.1", nil)
	require.NoError(t, err)
	assert.NotZero(t, got)
}

func TestCheck(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := busy.Addr().(*net.TCPAddr).Port
	assert.ErrorContains(t, Check("127.0.0.1", p), "port "+strconv.Itoa(p)+" is not available")
	busy.Close()
	assert.NoError(t, Check("127.0.0.1", p))
}
