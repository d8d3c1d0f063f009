package files

import "fmt"

// create writes a new file with exactly fileText (no newline added).
func (e *Editor) create(p, fileText string) (EditResult, error) {
	if err := e.writeText(p, fileText, textFile{}); err != nil {
		return EditResult{}, err
	}
	if err := e.hist.add(p, fileText); err != nil {
		return EditResult{}, err
	}
	return EditResult{
		Output:     fmt.Sprintf("File created successfully at: %s", p),
		NewContent: fileText,
	}, nil
}

// undo restores the file's content from before its last edit.
func (e *Editor) undo(p string) (EditResult, error) {
	current, err := e.readText(p)
	if err != nil {
		return EditResult{}, err
	}
	old, ok, err := e.hist.pop(p)
	if err != nil {
		return EditResult{}, err
	}
	if !ok {
		return EditResult{}, errorf(nil, "No edit history found for %s.", p)
	}
	if err := e.writeText(p, old, current); err != nil {
		return EditResult{}, err
	}
	return EditResult{
		Output:     fmt.Sprintf("Last edit to %s undone successfully. %s", p, makeOutput(old, p, 1)),
		OldContent: current.text,
		NewContent: old,
	}, nil
}
