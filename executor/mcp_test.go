package executor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseMCPServers_ErrorsAreInvalidOfTheirSentinel(t *testing.T) {
	tests := []struct {
		body string
		want error
	}{
		{`{"name": "a", "command": "b"}`, ErrMCPNotList},
		{`[{"name": "a b", "command": "b"}]`, ErrMCPConfig},
		{`[{"name": "a", "command": ""}]`, ErrMCPConfig},
	}
	for _, tt := range tests {
		_, err := ParseMCPServers([]byte(tt.body))
		assert.ErrorIs(t, err, tt.want, tt.body)
		assert.Equal(t, KindInvalid, KindOf(err), tt.body)
	}
	cfgs, err := ParseMCPServers([]byte(`[{"name": "a", "command": "b"}]`))
	assert.NoError(t, err)
	assert.Len(t, cfgs, 1)
}
