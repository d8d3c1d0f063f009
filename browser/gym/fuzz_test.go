package gym

import (
	"reflect"
	"testing"
)

// FuzzParse checks that the BrowserGym action parser never panics
// and is deterministic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`click("12")`, "fill('5', 'hello\\nworld')\nclick('6', button=\"right\")", `goto("http://x/?a=1&b=2")`,
		`send_msg_to_user("done"); noop(500)`, `select_option('3', ["a", "b"])`, `scroll(0, -200.5)`,
		`press("7", "ControlOrMeta+a")`, `drag_and_drop('1', '2')`, `upload_file("4", "/tmp/a.txt")`,
		`click(`, `fill('1', """multi`, `x = {"k": [1, (2, 3)], 'n': None, "t": True}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		calls, err := Parse(src)
		again, err2 := Parse(src)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(calls, again) {
			t.Fatalf("parsing %q twice gave different results", src)
		}
	})
}
