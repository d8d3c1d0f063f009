package serverflags

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsSwerex_ByBaseName(t *testing.T) {
	assert.True(t, IsSwerex("/usr/local/bin/swerex-remote"))
	assert.True(t, IsSwerex("swerex-remote"))
	assert.False(t, IsSwerex("/usr/local/bin/action-server"))
	assert.False(t, IsSwerex("swerex-remote.sh"))
}

func TestParseSwerex_TakesUpstreamsCommandLine(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want SwerexConfig
	}{
		{"defaults", []string{"--auth-token", "t"}, SwerexConfig{Host: "0.0.0.0", Port: 8000, AuthToken: "t"}},
		{"all", []string{"--host", "127.0.0.1", "--port", "9000", "--auth-token", "t"}, SwerexConfig{Host: "127.0.0.1", Port: 9000, AuthToken: "t"}},
		{"equals form", []string{"--auth-token=t", "--port=1"}, SwerexConfig{Host: "0.0.0.0", Port: 1, AuthToken: "t"}},
		{"empty token", []string{"--auth-token", ""}, SwerexConfig{Host: "0.0.0.0", Port: 8000}},
		{"prefix", []string{"--auth", "t", "--po", "7"}, SwerexConfig{Host: "0.0.0.0", Port: 7, AuthToken: "t"}},
		{"version", []string{"--version"}, SwerexConfig{Host: "0.0.0.0", Port: 8000, ShowVersion: true}},
		{"help", []string{"-h"}, SwerexConfig{Host: "0.0.0.0", Port: 8000, ShowHelp: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSwerex(tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseSwerex_RefusesWhatUpstreamRefuses(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no token", []string{"--port", "1"}, "required: --auth-token"},
		{"bad port", []string{"--auth-token", "t", "--port", "x"}, "invalid int value"},
		{"missing value", []string{"--auth-token"}, "expected one argument"},
		{"unknown", []string{"--auth-token", "t", "--bogus"}, "unrecognized"},
		{"positional", []string{"--auth-token", "t", "extra"}, "unrecognized"},
		{"version with more", []string{"--version", "--auth-token", "t"}, "cannot be combined"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSwerex(tc.args)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
