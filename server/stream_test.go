package server

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
)

// TestEventWriter_BytesAsBefore pins the events to the bytes the server
// wrote when it formatted each with fmt from json.Marshal.
func TestEventWriter_BytesAsBefore(t *testing.T) {
	code := 0
	for _, tc := range []struct {
		name  string
		event string
		id    int64
		data  any
	}{
		{"output", api.EventOutput, 12, api.OutputEvent{Offset: 3, Data: "1\n2\n<a & b>\t\"q\" \\ é\u2028\x1b"}},
		{"empty output", api.EventOutput, 0, api.OutputEvent{}},
		{"lost", api.EventLost, 9, api.LostEvent{From: 1, To: 9, Bytes: 8}},
		{"tail without id", api.EventTail, -1, api.TailEvent{Offset: 7, Tail: "50%"}},
		{"exit", api.EventExit, 1 << 40, api.Command{ID: 2, Command: "seq 3", ExitCode: &code}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(rec)
			ew := newEventWriter(c.Writer)
			// Twice: the buffer is reused.
			require.True(t, ew.write(tc.event, tc.id, tc.data))
			require.True(t, ew.write(tc.event, tc.id, tc.data))

			b, err := json.Marshal(tc.data)
			require.NoError(t, err)
			want := fmt.Sprintf("event: %s\ndata: %s\n\n", tc.event, b)
			if tc.id >= 0 {
				want = fmt.Sprintf("event: %s\nid: %d\ndata: %s\n\n", tc.event, tc.id, b)
			}
			assert.Equal(t, want+want, rec.Body.String())
		})
	}
}
