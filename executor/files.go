package executor

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/actionserver/actionserver/event"
	"github.com/actionserver/actionserver/files"
)

// editorErrorPrefix starts the content of a read or edit observation whose
// editor call failed: upstream reports those as content, not as errors.
const editorErrorPrefix = "ERROR:\n"

// read runs a "read" action, with the sandbox user's filesystem rights.
// Relative paths resolve against the default shell's current directory.
func (e *Executor) read(ctx context.Context, a *event.FileRead) (event.Observation, error) {
	cwd := ""
	if a.ImplSource != event.ImplOHACI {
		cwd = e.cwd(ctx)
	}
	var obs event.Observation
	err := e.fsUser.Do(func() error {
		var err error
		obs, err = e.readAs(ctx, a, cwd)
		return err
	})
	return obs, err
}

// readAs is read once the rights are the user's.
func (e *Executor) readAs(ctx context.Context, a *event.FileRead, cwd string) (event.Observation, error) {
	// Upstream checks the path as given before anything else. A relative
	// path is checked against its own process directory there, which holds
	// none of the agent's files, so only absolute paths are checked here;
	// files.Read still refuses relative binaries with the same message.
	if filepath.IsAbs(a.Path) && files.IsBinary(a.Path) {
		return &event.ErrorObservation{Content: files.BinaryFileMessage}, nil
	}
	if a.ImplSource == event.ImplOHACI {
		res, err := e.editor.Do(ctx, files.EditRequest{Command: files.CmdView, Path: a.Path, ViewRange: a.ViewRange})
		content, err := editorContent(res, err)
		if err != nil {
			return nil, err
		}
		return &event.FileReadResult{Content: content, Path: a.Path, ImplSource: event.ImplOHACI}, nil
	}
	content, err := files.Read(ctx, cwd, a.Path, a.Start, a.End)
	if fe, ok := files.IsError(err); ok {
		return &event.ErrorObservation{Content: fe.Msg}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", a.Path, err)
	}
	return &event.FileReadResult{Content: content, Path: files.Resolve(cwd, a.Path), ImplSource: event.ImplDefault}, nil
}

// write runs a "write" action with the sandbox user's filesystem rights;
// new files and directories go to the sandbox user.
func (e *Executor) write(ctx context.Context, a *event.FileWrite) (event.Observation, error) {
	cwd := e.cwd(ctx)
	err := e.fsUser.Do(func() error {
		return files.Write(ctx, cwd, a.Path, a.Content, a.Start, a.End, e.fileOwner())
	})
	if fe, ok := files.IsError(err); ok {
		return &event.ErrorObservation{Content: fe.Msg}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", a.Path, err)
	}
	return &event.FileWriteResult{Path: files.Resolve(cwd, a.Path)}, nil
}

// edit runs an "edit" action on the file editor, with the sandbox user's
// filesystem rights (its undo history included). Only the oh_aci editor
// runs here; the LLM-based one is the host's.
func (e *Executor) edit(ctx context.Context, a *event.FileEdit) (event.Observation, error) {
	if a.ImplSource == event.ImplLLMBasedEdit {
		return nil, fmt.Errorf("LLM-based editing is not supported by the action server; use impl_source %q", event.ImplOHACI)
	}
	req := files.EditRequest{Command: a.Command, Path: a.Path, FileText: a.FileText, OldStr: a.OldStr, NewStr: a.NewStr}
	if a.InsertLine != nil {
		// A number or a string: the editor reads both as text.
		l := files.InsertLine(a.InsertLine.Raw)
		req.InsertLine = &l
	}
	var res files.EditResult
	err := e.fsUser.Do(func() error {
		var err error
		res, err = e.editor.Do(ctx, req)
		return err
	})
	content, err := editorContent(res, err)
	if err != nil {
		return nil, err
	}
	// Upstream reports the action's strings, not the file's contents, as
	// old_content and new_content; the host shows them as the change.
	return &event.FileEditResult{
		Content:    content,
		Path:       a.Path,
		OldContent: a.OldStr,
		NewContent: a.NewStr,
		ImplSource: event.ImplOHACI,
		Diff:       event.StrPtr(files.Diff(a.Path, res.OldContent, res.NewContent)),
	}, nil
}

// editorContent turns an editor call's outcome into the observation's
// content; only server faults remain errors.
func editorContent(res files.EditResult, err error) (string, error) {
	if fe, ok := files.IsError(err); ok {
		return editorErrorPrefix + fe.Msg, nil
	}
	if err != nil {
		return "", fmt.Errorf("file editor: %w", err)
	}
	return res.Output, nil
}
