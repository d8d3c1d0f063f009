package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/actionserver/actionserver/files"
)

// fileEditorCommand is the hidden mode the agent skills' file_editor runs:
// one editor call read as JSON from stdin, answered as JSON on stdout. It
// runs in the kernel's process, as the sandbox user, so the user's file
// permissions apply exactly as they do to upstream's in-kernel editor, and
// the editor is this binary's, so there is one implementation.
const fileEditorCommand = "file-editor"

// editorHistoryEnv names the directory that keeps the undo history between
// calls.
const editorHistoryEnv = "ACTION_SERVER_EDITOR_HISTORY"

type editorCall struct {
	Command    string          `json:"command"`
	Path       string          `json:"path"`
	FileText   *string         `json:"file_text"`
	OldStr     *string         `json:"old_str"`
	NewStr     *string         `json:"new_str"`
	InsertLine json.RawMessage `json:"insert_line"`
	ViewRange  []int           `json:"view_range"`
}

// runFileEditor answers one call with openhands-aci's result fields, in
// its order: output and error, and for a success path, prev_exist,
// old_content and new_content; or, for an OS error upstream would raise,
// the exception's class and message.
func runFileEditor(in io.Reader, out io.Writer) int {
	var call editorCall
	if err := json.NewDecoder(in).Decode(&call); err != nil {
		fmt.Fprintln(os.Stderr, "file-editor: bad request:", err)
		return 2
	}
	req := files.EditRequest{Command: call.Command, Path: call.Path, FileText: call.FileText,
		OldStr: call.OldStr, NewStr: call.NewStr, ViewRange: call.ViewRange}
	if len(call.InsertLine) > 0 && string(call.InsertLine) != "null" {
		var s string
		if json.Unmarshal(call.InsertLine, &s) == nil {
			req.InsertLine = s
		} else {
			req.InsertLine = json.Number(bytes.TrimSpace(call.InsertLine))
		}
	}
	ed := &files.Editor{HistoryDir: os.Getenv(editorHistoryEnv), Owner: files.KeepOwner}
	if wd, err := os.Getwd(); err == nil {
		ed.WorkspaceRoot = wd
	}
	res, err := ed.Do(context.Background(), req)
	ed.Close()
	type field struct {
		k string
		v any
	}
	var fields []field
	var osErr *files.OSError
	if fe, ok := files.IsError(err); ok {
		fields = []field{{"output", nil}, {"error", fe.Msg}}
	} else if errors.As(err, &osErr) {
		// Upstream's editor lets these escape as exceptions; the Python
		// side raises the same class with the same text.
		fields = []field{{"exception", osErr.PyClass()}, {"message", osErr.Error()}}
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "file-editor:", err)
		return 1
	} else {
		var oldC, newC any
		switch call.Command {
		case files.CmdCreate:
			newC = *call.FileText
		case files.CmdStrReplace, files.CmdInsert, files.CmdUndoEdit:
			oldC, newC = res.OldContent, res.NewContent
		}
		fields = []field{{"output", res.Output}, {"error", nil}, {"path", call.Path},
			{"prev_exist", call.Command != files.CmdCreate}, {"old_content", oldC}, {"new_content", newC}}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.k)
		v, _ := json.Marshal(f.v)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString("}\n")
	out.Write(b.Bytes())
	return 0
}
