package jupyter

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestContent_TimeoutPrintedAsPythonFloat(t *testing.T) {
	tests := []struct {
		timeout float64
		want    string
	}{
		{5, "[Execution timed out (5.0 seconds).]"},
		{2.5, "[Execution timed out (2.5 seconds).]"},
		{1e-05, "[Execution timed out (1e-05 seconds).]"},
		{0.0001, "[Execution timed out (0.0001 seconds).]"},
	}
	for _, tt := range tests {
		timeout := tt.timeout
		r := content(Cell{Code: "x", Timeout: &timeout}, []output{{text: "partial"}}, true, "", "")
		assert.Equal(t, tt.want, r.Content)
	}
}
