package chown

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOwner_ZeroValueKeepsAndToGives(t *testing.T) {
	cases := []struct {
		name     string
		o        Owner
		keep     bool
		uid, gid int
	}{
		{"zero value", Owner{}, true, -1, -1},
		{"Keep", Keep, true, -1, -1},
		{"root, asked for", To(0, 0), false, 0, 0},
		{"a user", To(1000, 1000), false, 1000, 1000},
		{"only the group", To(-1, 50), false, -1, 50},
		{"both kept", To(-1, -1), true, -1, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.keep, tc.o.IsKeep())
			assert.Equal(t, tc.uid, tc.o.UID())
			assert.Equal(t, tc.gid, tc.o.GID())
		})
	}
}
