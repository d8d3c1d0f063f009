package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPluginTimeout(t *testing.T) {
	cases := []struct {
		value string
		want  time.Duration
	}{
		{"", defaultPluginTimeout},
		{"1", time.Second},
		{"0.01", 10 * time.Millisecond},
		{"300", 5 * time.Minute},
		{"2.5", 2500 * time.Millisecond},
	}
	for _, tc := range cases {
		got, err := pluginTimeout(tc.value)
		require.NoError(t, err, tc.value)
		assert.Equal(t, tc.want, got, tc.value)
	}
	for _, bad := range []string{"abc", "0", "-5", "10s", "NaN", "Inf", "1e300", " 5"} {
		_, err := pluginTimeout(bad)
		require.Error(t, err, bad)
		assert.Equal(t, `INIT_PLUGIN_TIMEOUT="`+bad+`" is not a positive number of seconds`, err.Error())
	}
}
