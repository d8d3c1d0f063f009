package server

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/executor"
)

func TestOutputChunk_CarriesEveryFieldToTheWire(t *testing.T) {
	code := 3
	tests := []struct {
		name string
		in   executor.OutputChunk
		want string
	}{
		{"running", executor.OutputChunk{Offset: 5, NextOffset: 9, Lost: 5, Data: "abcd", Tail: "$ "},
			`{"offset":5,"next_offset":9,"lost":5,"data":"abcd","tail":"$ ","done":false,"exit_code":null}`},
		{"done", executor.OutputChunk{Offset: 9, NextOffset: 9, Done: true, ExitCode: &code},
			`{"offset":9,"next_offset":9,"lost":0,"data":"","tail":"","done":true,"exit_code":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(outputChunk(tt.in))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
		})
	}
}
