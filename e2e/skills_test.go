package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
)

func cell(t *testing.T, s *server, code string) string {
	t.Helper()
	a := ipython(code, 60)
	a.IncludeExtra = false
	obs, err := s.Client.Execute(ctxT(t), a)
	require.NoError(t, err)
	return obs.Text()
}

func TestAgentSkills_HelpersInTheKernel(t *testing.T) {
	ws := t.TempDir()
	s := startServer(t, startOpts{workDir: ws, args: []string{"--working-dir", ws, "--no-enable-browser", "--plugins", "agent_skills", "jupyter"}})
	var lines []string
	for i := 1; i <= 150; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	p := filepath.Join(ws, "big.txt")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644))

	numbered := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "%d|line %d\n", i, i)
		}
		return b.String()
	}
	assert.Equal(t, "[File: "+p+" (150 lines total)]\n(this is the beginning of the file)\n"+numbered(1, 100)+
		"(50 more lines below)\n[Use `scroll_down` to view the next 100 lines of the file!]",
		cell(t, s, fmt.Sprintf("open_file(%q)", p)))
	assert.Equal(t, "[File: "+p+" (150 lines total)]\n(50 more lines above)\n"+numbered(51, 150)+"(this is the end of the file)",
		cell(t, s, "scroll_down()"))
	assert.Equal(t, "[File: "+p+" (150 lines total)]\n(this is the beginning of the file)\n"+numbered(1, 100)+"(50 more lines below)",
		cell(t, s, "scroll_up()"))
	assert.Equal(t, "[Found 2 matches for \"line 15\" in "+p+"]\nLine 15: line 15\nLine 150: line 150\n[End of matches for \"line 15\" in "+p+"]",
		cell(t, s, fmt.Sprintf("search_file('line 15', %q)", p)))
	assert.Equal(t, "[Found 1 matches for \"big\" in ./]\n./big.txt\n[End of matches for \"big\" in ./]", cell(t, s, "find_file('big')"))
	assert.Equal(t, "[Found 1 matches for \"line 150\" in ./]\n./big.txt (Line 150): line 150\n[End of matches for \"line 150\" in ./]",
		cell(t, s, "search_dir('line 150')"))
	assert.Equal(t, "ERROR: File /nope.txt not found.", cell(t, s, "open_file('/nope.txt')"))

	// file_editor: the edit action's editor, with upstream's output frame.
	out := cell(t, s, fmt.Sprintf("print(file_editor(command='create', path=%q, file_text='a\\nb'))", filepath.Join(ws, "e.txt")))
	require.True(t, strings.HasPrefix(out, "<oh_aci_output_"), out)
	assert.Contains(t, out, `"output": "File created successfully at: `+filepath.Join(ws, "e.txt")+`","error": null,`)
	assert.Contains(t, out, `"prev_exist": false`)
	assert.Contains(t, out, `, "formatted_output_and_error": "File created successfully at: `)
	out = cell(t, s, fmt.Sprintf("print(file_editor(command='str_replace', path=%q, old_str='b', new_str='B'))", filepath.Join(ws, "e.txt")))
	assert.Contains(t, out, "has been edited")
	out = cell(t, s, fmt.Sprintf("print(file_editor(command='undo_edit', path=%q))", filepath.Join(ws, "e.txt")))
	assert.Contains(t, out, "undone successfully", "the undo history spans calls")
	out = cell(t, s, "print(file_editor(command='view', path='relative.txt'))")
	assert.Contains(t, out, `"output": null,"error": "Invalid `+"`path`"+` parameter: relative.txt.`)
	assert.Contains(t, out, `"formatted_output_and_error": "ERROR:\nInvalid`)
}

// TestAgentSkills_FileEditorHasTheUsersPermissions ports upstream's
// test_ipython_file_editor_permissions_as_openhands.
func TestAgentSkills_FileEditorHasTheUsersPermissions(t *testing.T) {
	s, ws := startAsSandboxUser(t, "--plugins", "agent_skills", "jupyter")
	secret := "/root/as-test-" + strconv.Itoa(os.Getpid()) + ".txt"
	obs, err := s.Client.Run(ctxT(t), "sudo touch "+secret+" && sudo chmod 600 "+secret, client.RunOptions{Timeout: 30 * time.Second})
	require.NoError(t, err)
	require.Equal(t, 0, obs.Metadata.ExitCode, obs.Content)
	t.Cleanup(func() { os.Remove(secret) })

	for _, code := range []string{
		fmt.Sprintf("print(file_editor(command='view', path=%q))", secret),
		fmt.Sprintf("print(file_editor(command='str_replace', path=%q, old_str='', new_str='test'))", secret),
		"print(file_editor(command='create', path='/root/new.txt', file_text='test'))",
	} {
		assert.Contains(t, cell(t, s, code), "Permission denied", code)
	}
	f := filepath.Join(ws, "test.txt")
	out := cell(t, s, fmt.Sprintf(`
print(file_editor(command='create', path=%[1]q, file_text='Line 1\nLine 2\nLine 3'))
print(file_editor(command='view', path=%[1]q))
print(file_editor(command='str_replace', path=%[1]q, old_str='Line 2', new_str='New Line 2'))
print(file_editor(command='undo_edit', path=%[1]q))
`, f))
	for _, want := range []string{"File created successfully", "Line 1", "Line 2", "Line 3", "New Line 2", "Last edit to", "undone successfully"} {
		assert.Contains(t, out, want)
	}
	fi, err := os.Stat(f)
	require.NoError(t, err)
	assert.Equal(t, "-rw-r--r--", fi.Mode().String(), "created by the user's process")
}
