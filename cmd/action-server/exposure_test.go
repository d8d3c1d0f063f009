package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExposedWithoutKey(t *testing.T) {
	cases := []struct {
		host, key string
		warn      bool
	}{
		{"0.0.0.0", "", true},
		{"::", "", true},
		{"", "", true}, // every interface
		{"10.1.2.3", "", true},
		{"192.168.0.7", "", true},
		{"2001:db8::1", "", true},
		{"sandbox.example", "", true},
		{"127.0.0.1", "", false},
		{"127.0.0.2", "", false},
		{"::1", "", false},
		{"[::1]", "", false},
		{"localhost", "", false},
		{"LocalHost", "", false},
		{"0.0.0.0", "secret", false},
		{"::", "secret", false},
		{"10.1.2.3", "secret", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.warn, exposedWithoutKey(c.host, c.key), "host %q, key %q", c.host, c.key)
	}
}
