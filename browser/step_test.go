package browser

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/actionserver/actionserver/browser/gym"
)

func TestPerformers_CoverTheActionSet(t *testing.T) {
	var have []string
	for name := range performers() {
		have = append(have, name)
	}
	sort.Strings(have)
	assert.Equal(t, gym.Names(), have)
}
