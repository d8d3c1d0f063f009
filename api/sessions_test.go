package api

import (
	"encoding/json"
	"testing"
)

// TestStreamPayloads_BytesAsBefore pins the stream's payloads to the bytes
// the server wrote when it built them from maps (whose keys encoding/json
// sorts): reordering a struct's fields would change the wire.
func TestStreamPayloads_BytesAsBefore(t *testing.T) {
	tests := []struct {
		name      string
		got, want any
	}{
		{"output", OutputEvent{Offset: 3, Data: "a<b"}, map[string]any{"offset": 3, "data": "a<b"}},
		{"lost", LostEvent{From: 1, To: 5, Bytes: 4}, map[string]int64{"from": 1, "to": 5, "bytes": 4}},
		{"tail", TailEvent{Offset: 7, Tail: "50%"}, map[string]any{"offset": 7, "tail": "50%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.got)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(tt.want)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}
