package client

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
)

func TestParseOutputEvent_DecodesWhatTheServerWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		off  int64
	}{
		{"empty", "", 0},
		{"seq lines", "1\r\n2\r\n3\n", 7},
		{"quotes and backslashes", `say "hi" \ bye` + "\t/", 1 << 40},
		{"html characters", "a<b && c>d", 12},
		{"control characters", "\x00\x01\x1b[31mred\x1b[0m\x7f\b\f", 3},
		{"non-ASCII", "héllo, 世界 🎉", 99},
		{"line and paragraph separators", "a\u2028b\u2029c", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(api.OutputEvent{Data: tc.data, Offset: tc.off})
			require.NoError(t, err)
			got, ok := parseOutputEvent(b)
			require.True(t, ok, "the server's form must take the fast path: %s", b)
			assert.Equal(t, api.OutputEvent{Data: tc.data, Offset: tc.off}, got)
		})
	}
}

func TestDecodeOutputEvent_AsEncodingJSONForOtherForms(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload string
	}{
		{"fields reordered", `{"offset":4,"data":"ab"}`},
		{"spaces", `{"data": "ab", "offset": 4}`},
		{"surrogate pair", `{"data":"\ud83c\udf89","offset":1}`},
		{"lone surrogate", `{"data":"\ud83c","offset":1}`},
		{"invalid UTF-8", "{\"data\":\"a\xffb\",\"offset\":1}"},
		{"raw control character", "{\"data\":\"a\nb\",\"offset\":1}"},
		{"unknown escape", `{"data":"a\qb","offset":1}`},
		{"short unicode escape", `{"data":"a\u12","offset":1}`},
		{"leading zero", `{"data":"a","offset":01}`},
		{"negative offset", `{"data":"a","offset":-1}`},
		{"exponent", `{"data":"a","offset":1e3}`},
		{"unterminated", `{"data":"abc`},
		{"trailing garbage", `{"data":"a","offset":1}x`},
		{"not an object", `"a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want api.OutputEvent
			wantErr := json.Unmarshal([]byte(tc.payload), &want)
			got, err := decodeOutputEvent([]byte(tc.payload))
			if wantErr != nil {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

func FuzzDecodeOutputEvent(f *testing.F) {
	for _, s := range []string{"", "1\r\n2\r\n", `"\`, "\x00é\u2028", "\xff", `{"data":"a","offset":1}`} {
		f.Add(s, int64(3))
	}
	f.Fuzz(func(t *testing.T, s string, off int64) {
		// Whatever the server writes decodes to what it encoded...
		if off >= 0 {
			b, err := json.Marshal(api.OutputEvent{Data: s, Offset: off})
			require.NoError(t, err)
			var want api.OutputEvent
			require.NoError(t, json.Unmarshal(b, &want))
			got, err := decodeOutputEvent(b)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		}
		// ...and any other payload as encoding/json decodes it.
		var want api.OutputEvent
		wantErr := json.Unmarshal([]byte(s), &want)
		got, err := decodeOutputEvent([]byte(s))
		if wantErr != nil {
			assert.Error(t, err)
			return
		}
		require.NoError(t, err)
		assert.Equal(t, want, got)
	})
}
