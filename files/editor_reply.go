package files

import (
	"context"
	"encoding/json"
	"errors"
)

// EditReply is the outcome of an editor call in the form the agent skills'
// file_editor reads, openhands-aci's result fields in their order: a
// success, a failure the agent should see, or an OS error that upstream's
// editor lets escape and the Python side raises again.
type EditReply struct {
	// Output is the text the agent sees after a success.
	Output string
	// Error is the message of a failure the agent should see; nil on
	// success.
	Error *string
	// Path and PrevExist describe the file of a success: whether it existed
	// before the call (every command but create needs it to).
	Path      string
	PrevExist bool
	// OldContent and NewContent are the file's text before and after a
	// command that changed it, nil otherwise (create has only NewContent).
	OldContent, NewContent *string
	// Exception is the class of the OS error (PermissionError,
	// FileNotFoundError, OSError) and Message its text; Exception is ""
	// unless the call raised.
	Exception, Message string
}

// Reply runs req and returns its outcome as an EditReply. Only server
// faults are errors.
func (e *Editor) Reply(ctx context.Context, req EditRequest) (EditReply, error) {
	res, err := e.Do(ctx, req)
	if fe, ok := IsError(err); ok {
		return EditReply{Error: &fe.Msg}, nil
	}
	if osErr, ok := errors.AsType[*OSError](err); ok {
		return EditReply{Exception: osErr.PyClass(), Message: osErr.Error()}, nil
	}
	if err != nil {
		return EditReply{}, err
	}
	r := EditReply{Output: res.Output, Path: req.Path, PrevExist: req.Command != CmdCreate}
	switch req.Command {
	case CmdCreate:
		r.NewContent = req.FileText
	case CmdStrReplace, CmdInsert, CmdUndoEdit:
		r.OldContent, r.NewContent = &res.OldContent, &res.NewContent
	}
	return r, nil
}

// MarshalJSON writes the fields of r's kind only: output and error, and
// after a success path, prev_exist, old_content and new_content; or
// exception and message.
func (r EditReply) MarshalJSON() ([]byte, error) {
	switch {
	case r.Exception != "":
		return json.Marshal(struct {
			Exception string `json:"exception"`
			Message   string `json:"message"`
		}{r.Exception, r.Message})
	case r.Error != nil:
		return json.Marshal(struct {
			Output *string `json:"output"`
			Error  string  `json:"error"`
		}{nil, *r.Error})
	}
	return json.Marshal(struct {
		Output     string  `json:"output"`
		Error      *string `json:"error"`
		Path       string  `json:"path"`
		PrevExist  bool    `json:"prev_exist"`
		OldContent *string `json:"old_content"`
		NewContent *string `json:"new_content"`
	}{r.Output, nil, r.Path, r.PrevExist, r.OldContent, r.NewContent})
}
