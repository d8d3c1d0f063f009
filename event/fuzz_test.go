package event

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzDecodeAction checks that no input makes the decoder panic, and that
// whatever it accepts survives an encode/decode round trip unchanged.
func FuzzDecodeAction(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/action_*.json")
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{"action": "run", "args": {"command": "ls", "is_input": false, "thought": ""}, "timeout": 120}`,
		`{"action": "edit", "args": {"path": "/a", "command": "insert", "insert_line": "3", "new_str": "x"}}`,
		`{"action": "read", "args": {"path": "/a", "view_range": [1, -1]}, "id": 7}`,
		`{"action": "run_ipython", "args": {"code": "1+1", "include_extra": true}}`,
		`{"action": "browse_interactive", "args": {"browser_actions": "click('1')"}}`,
		`{"action": "message", "args": {"content": "hi"}}`,
		`{"action": "write", "args": {"path": "p", "content": "c", "security_risk": 9}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := DecodeAction(data)
		if err != nil {
			return
		}
		enc, err := EncodeAction(a)
		if err != nil {
			t.Fatalf("decoded %T but cannot encode it: %v", a, err)
		}
		b, err := DecodeAction(enc)
		if err != nil {
			t.Fatalf("cannot decode own encoding %s: %v", enc, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the action:\n%#v\n%#v", a, b)
		}
	})
}
