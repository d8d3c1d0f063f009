package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/actionserver/actionserver/files"
	"github.com/actionserver/actionserver/internal/chown"
)

// fileEditorCommand is the hidden mode the agent skills' file_editor runs:
// one editor call (a files.EditRequest) read as JSON from stdin, answered
// with a files.EditReply as JSON on stdout. It runs in the kernel's process,
// as the sandbox user, so the user's file permissions apply exactly as they
// do to upstream's in-kernel editor, and the editor is this binary's, so
// there is one implementation.
const fileEditorCommand = "file-editor"

// editorHistoryEnv names the directory that keeps the undo history between
// calls.
const editorHistoryEnv = "ACTION_SERVER_EDITOR_HISTORY"

// runFileEditor answers one call and returns the process's exit code: 2 for
// a request that is not one, 1 for a fault of the editor.
func runFileEditor(in io.Reader, out io.Writer) int {
	var req files.EditRequest
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "file-editor: bad request:", err)
		return 2
	}
	ed := &files.Editor{HistoryDir: os.Getenv(editorHistoryEnv), Owner: chown.Keep}
	if wd, err := os.Getwd(); err == nil {
		ed.WorkspaceRoot = wd
	}
	reply, err := ed.Reply(context.Background(), req)
	ed.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "file-editor:", err)
		return 1
	}
	if err := json.NewEncoder(out).Encode(reply); err != nil {
		fmt.Fprintln(os.Stderr, "file-editor:", err)
		return 1
	}
	return 0
}
