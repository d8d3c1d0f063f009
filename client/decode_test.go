package client

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
)

// texts holds strings that stress JSON's string encoding.
var texts = []string{
	"",
	"1\r\n2\r\n3\n",
	`say "hi" \ bye` + "\t/",
	"a<b && c>d",
	"\x00\x01\x1b[31mred\x1b[0m\x7f\b\f",
	"héllo, 世界 🎉",
	"a\u2028b\u2029c",
}

func TestDecodeOutputEvent_TakesTheServersFormByHand(t *testing.T) {
	for _, text := range texts {
		t.Run(text, func(t *testing.T) {
			want := api.OutputEvent{Data: text, Offset: 1 << 40}
			b, err := json.Marshal(want)
			require.NoError(t, err)
			var got api.OutputEvent
			ok := scanFlatObject(b, func(key []byte, v flatValue) bool {
				switch string(key) {
				case "data":
					return v.setString(&got.Data)
				case "offset":
					return v.setInt(&got.Offset)
				}
				return false
			})
			require.True(t, ok, "the server's form must be decoded by hand: %s", b)
			assert.Equal(t, want, got)

			got, err = decodeOutputEvent(b)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

func TestDecodeOutputChunk_TakesTheServersFormByHand(t *testing.T) {
	code := -1
	for _, text := range texts {
		for _, want := range []api.OutputChunk{
			{Offset: 3, NextOffset: 3 + int64(len(text)), Data: text, Tail: text},
			{Offset: 9, NextOffset: 9 + int64(len(text)), Lost: 4, Data: text, Done: true, ExitCode: &code},
		} {
			t.Run(text, func(t *testing.T) {
				b, err := json.Marshal(want)
				require.NoError(t, err)
				require.True(t, scanFlatObject(b, func([]byte, flatValue) bool { return true }),
					"the server's form must be decoded by hand: %s", b)
				got, err := decodeOutputChunk(b)
				require.NoError(t, err)
				assert.Equal(t, want, got)
			})
		}
	}
}

// otherForms are payloads the server does not write: each must decode as
// encoding/json decodes it, error or not.
var otherForms = []string{
	`{"offset":4,"data":"ab"}`,
	`{"data": "ab", "offset": 4}`,
	`{"DATA":"ab","Offset":4}`,
	`{"data":"a","offset":1,"data":"b"}`,
	`{"data":null,"offset":null,"exit_code":null,"done":null}`,
	`{"data":"a","offset":1,"more":[1,2]}`,
	`{}`,
	`{"data":"\ud83c\udf89","offset":1}`,
	`{"data":"\ud83c","offset":1}`,
	`{"data":"\u00e9\u00E9\/","offset":1}`,
	"{\"data\":\"a\xffb\",\"offset\":1}",
	"{\"data\":\"a\nb\",\"offset\":1}",
	`{"data":"a\qb","offset":1}`,
	`{"data":"a\u12","offset":1}`,
	`{"data":"a\`,
	`{"data":"a","offset":01}`,
	`{"data":"a","offset":-1}`,
	`{"data":"a","offset":-0}`,
	`{"data":"a","offset":1e3}`,
	`{"data":"a","offset":1.0}`,
	`{"data":"a","offset":99999999999999999999}`,
	`{"data":1,"offset":1}`,
	`{"data":"a","offset":"1"}`,
	`{"done":true,"exit_code":130,"tail":"x"}`,
	`{"done":1}`,
	`{"done":tru}`,
	`{"data":"abc`,
	`{"data":"a","offset":1}x`,
	`{"data":"a","offset":1,}`,
	`{"data":"a"}}`,
	`{"data":"}`,
	`"a"`,
	``,
}

func TestDecodeOutput_AsEncodingJSONForOtherForms(t *testing.T) {
	for _, payload := range otherForms {
		t.Run(payload, func(t *testing.T) {
			var wantEv api.OutputEvent
			errEv := json.Unmarshal([]byte(payload), &wantEv)
			gotEv, err := decodeOutputEvent([]byte(payload))
			if errEv != nil {
				assert.Error(t, err)
			} else if assert.NoError(t, err) {
				assert.Equal(t, wantEv, gotEv)
			}

			var wantCh api.OutputChunk
			errCh := json.Unmarshal([]byte(payload), &wantCh)
			gotCh, err := decodeOutputChunk([]byte(payload))
			if errCh != nil {
				assert.Error(t, err)
			} else if assert.NoError(t, err) {
				assert.Equal(t, wantCh, gotCh)
			}
		})
	}
}

func FuzzDecodeOutput(f *testing.F) {
	for _, s := range texts {
		f.Add(s, int64(3))
	}
	for _, s := range otherForms {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, s string, off int64) {
		// What the server writes decodes to what it encoded...
		b, err := json.Marshal(api.OutputEvent{Data: s, Offset: off})
		require.NoError(t, err)
		var wantEv api.OutputEvent
		require.NoError(t, json.Unmarshal(b, &wantEv))
		gotEv, err := decodeOutputEvent(b)
		require.NoError(t, err)
		assert.Equal(t, wantEv, gotEv)

		code := int(off)
		b, err = json.Marshal(api.OutputChunk{Offset: off, NextOffset: off, Data: s, Tail: s, Done: true, ExitCode: &code})
		require.NoError(t, err)
		var wantCh api.OutputChunk
		require.NoError(t, json.Unmarshal(b, &wantCh))
		gotCh, err := decodeOutputChunk(b)
		require.NoError(t, err)
		assert.Equal(t, wantCh, gotCh)

		// ...and anything else as encoding/json decodes it.
		wantEv = api.OutputEvent{}
		errEv := json.Unmarshal([]byte(s), &wantEv)
		gotEv, err = decodeOutputEvent([]byte(s))
		if errEv != nil {
			assert.Error(t, err)
		} else if assert.NoError(t, err) {
			assert.Equal(t, wantEv, gotEv)
		}
		wantCh = api.OutputChunk{}
		errCh := json.Unmarshal([]byte(s), &wantCh)
		gotCh, err = decodeOutputChunk([]byte(s))
		if errCh != nil {
			assert.Error(t, err)
		} else if assert.NoError(t, err) {
			assert.Equal(t, wantCh, gotCh)
		}
	})
}
