package files

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/chown"
)

// TestReply_JSONContract holds the JSON that the agent skills' file_editor
// sends and reads: the call decoded into an EditRequest, and the reply with
// only the fields of its kind, in openhands-aci's order.
func TestReply_JSONContract(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f.txt")
	long := filepath.Join(dir, strings.Repeat("n", 300))
	tests := []struct {
		name    string
		request string
		want    string
	}{
		{"create", `{"command":"create","path":"` + f + `","file_text":"a\nb\n","insert_line":null}`,
			`{"output":"File created successfully at: ` + f + `","error":null,"path":"` + f + `","prev_exist":false,"old_content":null,"new_content":"a\nb\n"}`},
		{"insert with a number", `{"command":"insert","path":"` + f + `","new_str":"x","insert_line":1}`,
			`{"output":"The file ` + f + ` has been edited. Here's the result of running ` + "`cat -n`" + ` on a snippet of the edited file:\n     1\ta\n     2\tx\n     3\tb\n     4\t\nReview the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.","error":null,"path":"` + f + `","prev_exist":true,"old_content":"a\nb\n","new_content":"a\nx\nb\n"}`},
		{"insert with a string", `{"command":"insert","path":"` + f + `","new_str":"y","insert_line":" 0 "}`,
			`{"output":"The file ` + f + ` has been edited. Here's the result of running ` + "`cat -n`" + ` on a snippet of the edited file:\n     1\ty\n     2\ta\n     3\tx\n     4\tb\n     5\t\nReview the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.","error":null,"path":"` + f + `","prev_exist":true,"old_content":"a\nx\nb\n","new_content":"y\na\nx\nb\n"}`},
		{"insert_line that is no integer", `{"command":"insert","path":"` + f + `","new_str":"z","insert_line":1.5}`,
			`{"output":null,"error":"Invalid insert_line value: '1.5'. Expected an integer."}`},
		{"insert_line of another type", `{"command":"insert","path":"` + f + `","new_str":"z","insert_line":true}`,
			`{"output":null,"error":"Invalid insert_line value: 'true'. Expected an integer."}`},
		{"view has no contents", `{"command":"view","path":"` + f + `","view_range":[1,1]}`,
			`{"output":"Here's the result of running ` + "`cat -n`" + ` on ` + f + `:\n     1\ty\n","error":null,"path":"` + f + `","prev_exist":true,"old_content":null,"new_content":null}`},
		{"failure", `{"command":"str_replace","path":"` + f + `","old_str":"nothing"}`,
			`{"output":null,"error":"No replacement was performed, old_str ` + "`nothing`" + ` did not appear verbatim in ` + f + `."}`},
		{"OS error", `{"command":"view","path":"` + long + `"}`,
			`{"exception":"OSError","message":"[Errno 36] File name too long: '` + long + `'"}`},
	}
	ed := &Editor{Owner: chown.Keep}
	t.Cleanup(func() { ed.Close() })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req EditRequest
			require.NoError(t, json.Unmarshal([]byte(tt.request), &req))
			reply, err := ed.Reply(context.Background(), req)
			require.NoError(t, err)
			got, err := json.Marshal(reply)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}
	_, err := os.Stat(f)
	require.NoError(t, err)
}
