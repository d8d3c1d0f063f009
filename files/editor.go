package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/actionserver/actionserver/internal/chown"
	"github.com/actionserver/actionserver/internal/pyfmt"
)

// Editor commands.
const (
	CmdView       = "view"
	CmdCreate     = "create"
	CmdStrReplace = "str_replace"
	CmdInsert     = "insert"
	CmdUndoEdit   = "undo_edit"
)

// DefaultMaxFileSize is the largest file the editor reads or edits.
const DefaultMaxFileSize = 10 << 20

// snippetContext is how many lines around an edit its snippet shows.
const snippetContext = 4

// supportedBinaryExts are the document and audio types that only "view"
// accepts, converting them to Markdown.
var supportedBinaryExts = map[string]bool{
	".docx": true, ".xlsx": true, ".pptx": true, ".pdf": true,
	".mp3": true, ".wav": true, ".m4a": true, ".flac": true,
}

// EditRequest is one str_replace_editor call. Pointer fields are nil when
// the parameter was not given (JSON null), which the editor tells apart from
// an empty string. Its JSON form is the call the agent skills' file_editor
// sends (see Editor.Reply).
type EditRequest struct {
	Command  string  `json:"command"`
	Path     string  `json:"path"`
	FileText *string `json:"file_text"`
	OldStr   *string `json:"old_str"`
	NewStr   *string `json:"new_str"`
	// InsertLine is where "insert" inserts; nil when not given.
	InsertLine *InsertLine `json:"insert_line"`
	// ViewRange is [start, end] (1-based, end -1 for "to the end"); only
	// "view" uses it. Empty means the whole file.
	ViewRange []int `json:"view_range"`
}

// InsertLine is the line after which "insert" inserts, as the agent wrote
// it: the text of a JSON number or of a JSON string, since agents send
// either. The editor reads it as Python's int() reads a string (surrounding
// space, a sign, digit-separating underscores) and reports any other text
// as an invalid value, so that text must reach it unchanged.
type InsertLine string

// Line returns the InsertLine of line n.
func Line(n int) *InsertLine {
	l := InsertLine(strconv.Itoa(n))
	return &l
}

// UnmarshalJSON takes a JSON string's content, and any other value's JSON
// text: a number's digits, or text the editor reports as invalid.
func (l *InsertLine) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, (*string)(l))
	}
	*l = InsertLine(bytes.TrimSpace(b))
	return nil
}

// EditResult is a successful editor call.
type EditResult struct {
	// Output is the text the agent sees.
	Output string
	// OldContent and NewContent are the file's text before and after the
	// call, "" when the command did not change a file; Diff renders them.
	OldContent, NewContent string
}

// Editor is the str_replace_editor of OpenHands (openhands-aci's OHEditor):
// view, create, str_replace, insert and undo_edit with the exact texts
// agents are trained on. It keeps an undo history per file across calls and
// is safe for concurrent use; calls are serialised. Close removes the
// history. The zero value works and suggests no paths.
type Editor struct {
	// WorkspaceRoot, if set, lets a relative path's error suggest
	// "Maybe you meant <root>/<path>?" when that file exists.
	WorkspaceRoot string
	// Owner is given files that "create" makes; the zero value makes them
	// root's, chown.Keep leaves them the server's.
	Owner chown.Owner
	// MaxFileSize overrides DefaultMaxFileSize when positive.
	MaxFileSize int64
	// HistoryDir, if set, keeps the undo history there, where it outlives
	// the Editor (editors in separate processes that share the directory
	// share the history); otherwise it lives in a temporary directory that
	// Close removes.
	HistoryDir string

	mu   sync.Mutex
	hist history
}

// NewEditor returns an Editor that suggests paths under workspaceRoot and
// leaves created files owned by the server process.
func NewEditor(workspaceRoot string) *Editor {
	return &Editor{WorkspaceRoot: workspaceRoot, Owner: chown.Keep}
}

// Close discards the undo history, unless it is kept in HistoryDir.
func (e *Editor) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hist.close()
}

// Do runs one editor command. A failure the agent should see is an *Error:
// the caller renders it as "ERROR:\n" + its message (as content, not as an
// error observation). Other errors are server faults.
func (e *Editor) Do(ctx context.Context, req EditRequest) (EditResult, error) {
	if err := ctx.Err(); err != nil {
		return EditResult{}, err
	}
	insertLine, hasInsertLine, err := parseInsertLine(req.InsertLine)
	if err != nil {
		return EditResult{}, err
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.hist.dir == "" && e.HistoryDir != "" {
		e.hist.dir = e.HistoryDir
	}

	p := pyPath(req.Path)
	if err := e.validatePath(req.Command, req.Path, p); err != nil {
		return EditResult{}, err
	}
	switch req.Command {
	case CmdView:
		return e.view(ctx, p, req.ViewRange)
	case CmdCreate:
		if req.FileText == nil {
			return EditResult{}, missingParam(req.Command, "file_text")
		}
		return e.create(p, *req.FileText)
	case CmdStrReplace:
		if req.OldStr == nil {
			return EditResult{}, missingParam(req.Command, "old_str")
		}
		if req.NewStr != nil && *req.NewStr == *req.OldStr {
			return EditResult{}, invalidParam("new_str", *req.NewStr, "No replacement was performed. `new_str` and `old_str` must be different.")
		}
		newStr := ""
		if req.NewStr != nil {
			newStr = *req.NewStr
		}
		return e.strReplace(p, *req.OldStr, newStr)
	case CmdInsert:
		if !hasInsertLine {
			return EditResult{}, missingParam(req.Command, "insert_line")
		}
		if req.NewStr == nil {
			return EditResult{}, missingParam(req.Command, "new_str")
		}
		return e.insert(p, insertLine, *req.NewStr)
	case CmdUndoEdit:
		return e.undo(p)
	}
	return EditResult{}, errorf(nil, "Unrecognized command %s. The allowed commands for the oh_editor tool are: view, create, str_replace, insert, undo_edit", req.Command)
}

func missingParam(command, param string) *Error {
	return errorf(nil, "Parameter `%s` is required for command: %s.", param, command)
}

func invalidParam(param, value, hint string) *Error {
	return errorf(nil, "Invalid `%s` parameter: %s. %s", param, value, hint)
}

// parseInsertLine reads insert_line with Python int()'s leniency: surrounding
// space, a sign, digit-separating underscores.
func parseInsertLine(l *InsertLine) (n int, ok bool, err error) {
	if l == nil {
		return 0, false, nil
	}
	x := string(*l)
	s := pyStrip(x)
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[:1] + underscoresBetweenDigits(s[1:])
	} else {
		s = underscoresBetweenDigits(s)
	}
	i, err := strconv.Atoi(s)
	if err != nil || s == "" || strings.HasPrefix(s, "+-") {
		return 0, false, errorf(nil, "Invalid insert_line value: '%s'. Expected an integer.", x)
	}
	return i, true, nil
}

// underscoresBetweenDigits drops underscores that separate two digits and
// marks any other underscore as invalid by leaving it in place.
func underscoresBetweenDigits(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && i > 0 && i+1 < len(s) && isDigit(s[i-1]) && isDigit(s[i+1]) {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// validatePath applies the editor's path checks in upstream's order.
func (e *Editor) validatePath(command, raw, p string) error {
	if !strings.HasPrefix(raw, "/") {
		hint := "The path should be an absolute path, starting with `/`."
		if e.WorkspaceRoot != "" {
			suggested := pyPath(e.WorkspaceRoot + "/" + raw)
			if exists(suggested) {
				hint += fmt.Sprintf(" Maybe you meant %s?", suggested)
			}
		}
		return invalidParam("path", p, hint)
	}
	ex, err := pathExists(p)
	if err != nil {
		return err
	}
	if command == CmdCreate && ex {
		return invalidParam("path", p, fmt.Sprintf("File already exists at: %s. Cannot overwrite files using command `create`.", p))
	}
	if command != CmdCreate && !ex {
		return invalidParam("path", p, fmt.Sprintf("The path %s does not exist. Please provide a valid path.", p))
	}
	if command != CmdView {
		if isDir(p) {
			return invalidParam("path", p, fmt.Sprintf("The path %s is a directory and only the `view` command can be used on directories.", p))
		}
		if ext := pySuffix(p); supportedBinaryExts[strings.ToLower(ext)] {
			return invalidParam("path", p, fmt.Sprintf("The path %s points to a binary file (%s) and only the `view` command can be used on supported binary files.", p, ext))
		}
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// pathExists is Python's Path.exists: a missing path (or a missing or
// non-directory parent, or a symlink loop) does not exist; any other
// failure, such as permission denied on a parent, is an error rather than
// a "no", as it is upstream (where it escapes the editor as an exception).
func pathExists(p string) (bool, error) {
	_, err := os.Stat(p)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.EBADF):
		return false, nil
	}
	return false, &OSError{Err: err}
}

// OSError is a failure upstream's editor does not handle: an OSError raised
// out of it. Its message is Python's str() of that exception.
type OSError struct{ Err error }

func (e *OSError) Error() string { return pyOSError(e.Err) }

func (e *OSError) Unwrap() error { return e.Err }

// PyClass names the Python exception class upstream raises.
func (e *OSError) PyClass() string {
	switch {
	case errors.Is(e.Err, fs.ErrPermission):
		return "PermissionError"
	case errors.Is(e.Err, fs.ErrNotExist):
		return "FileNotFoundError"
	}
	return "OSError"
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// pySuffix mirrors PurePath.suffix: the last dot-extension of the final
// component, none for dotfiles like ".bashrc" or names ending in a dot.
func pySuffix(p string) string {
	name := p[strings.LastIndexByte(p, '/')+1:]
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return ""
	}
	return name[i:]
}

func isSupportedBinary(p string) bool {
	return supportedBinaryExts[strings.ToLower(pySuffix(p))]
}

func (e *Editor) maxFileSize() int64 {
	if e.MaxFileSize > 0 {
		return e.MaxFileSize
	}
	return DefaultMaxFileSize
}

// validateFile refuses existing regular files that are too large or look
// binary (the supported document types excepted).
func (e *Editor) validateFile(p string) error {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if limit := e.maxFileSize(); fi.Size() > limit {
		return errorf(nil, "File validation failed for %s: File is too large (%.1fMB). Maximum allowed size is %dMB.",
			p, float64(fi.Size())/1024/1024, limit/1024/1024)
	}
	if isSupportedBinary(p) {
		return nil
	}
	if IsBinary(p) {
		return errorf(nil, "File validation failed for %s: File appears to be binary and this file type cannot be read or edited by this tool.", p)
	}
	return nil
}

// textFile is a file's content as the editor sees it: decoded and with
// newlines translated, plus what it takes to write it back the same way.
type textFile struct {
	text  string
	codec codec
	crlf  bool // every line ended in "\r\n": write them back that way
}

// readText validates and reads p. Errors are the agent-facing
// "Ran into ... while trying to read" texts.
func (e *Editor) readText(p string) (textFile, error) {
	if err := e.validateFile(p); err != nil {
		return textFile{}, err
	}
	// A FIFO or device could block or never end; readExisting refuses it.
	data, err := readExisting(p)
	if err != nil {
		return textFile{}, errorf(err, "Ran into %s while trying to read %s", pyOSError(err), p)
	}
	c := detectCodec(data)
	s, err := c.decode(data)
	if err != nil {
		return textFile{}, errorf(err, "Ran into %v while trying to read %s", err, p)
	}
	n := strings.Count(s, "\n")
	crlf := n > 0 && strings.Count(s, "\r\n") == n
	return textFile{text: universalNewlines(s), codec: c, crlf: crlf}, nil
}

// writeText validates p (if it exists) and replaces its content with text in
// the file's encoding and line endings. Errors are the agent-facing
// "Ran into ... while trying to write to" texts.
func (e *Editor) writeText(p, text string, like textFile) error {
	if err := e.validateFile(p); err != nil {
		return err
	}
	if like.crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	data, err := like.codec.encode(text)
	if err != nil {
		return errorf(err, "Ran into %s while trying to write to %s", encodeErrorText(like.codec, text), p)
	}
	err = writeAtomic(p, data, 0o644, e.Owner)
	var ce *chownError
	if errors.As(err, &ce) {
		// The content is in place; ownership is best effort for the editor,
		// whose upstream never changes it.
		slog.Warn("editor: set owner of written file", "path", p, "err", ce.err)
		err = nil
	}
	if err != nil {
		return errorf(err, "Ran into %s while trying to write to %s", pyOSError(err), p)
	}
	return nil
}

// encodeErrorText words an encoding failure as Python's UnicodeEncodeError.
func encodeErrorText(c codec, text string) string {
	pos := 0
	for _, r := range text {
		if _, err := c.encode(string(r)); err != nil {
			var ch string
			if r < 0x100 {
				ch = fmt.Sprintf(`'\x%02x'`, r)
			} else if r < 0x10000 {
				ch = fmt.Sprintf(`'\u%04x'`, r)
			} else {
				ch = fmt.Sprintf(`'\U%08x'`, r)
			}
			reason := "character maps to <undefined>"
			if c.name == latin1.name {
				reason = "ordinal not in range(256)"
			}
			return fmt.Sprintf("%s codec can't encode character %s in position %d: %s", pyfmt.String(c.String()), ch, pos, reason)
		}
		pos++
	}
	return "an encoding error"
}

// makeOutput numbers content like `cat -n` after truncating it, the way the
// editor shows files and snippets.
func makeOutput(content, description string, startLine int) string {
	content = truncateChars(content, maxResponseChars, noticeTextFile)
	var b strings.Builder
	b.Grow(len(content) + len(content)/8 + 128)
	b.WriteString("Here's the result of running `cat -n` on ")
	b.WriteString(description)
	b.WriteString(":\n")
	n := startLine
	for {
		i := strings.IndexByte(content, '\n')
		line := content
		if i >= 0 {
			line = content[:i]
		}
		fmt.Fprintf(&b, "%6d\t", n)
		b.WriteString(line)
		if i < 0 {
			break
		}
		b.WriteByte('\n')
		content = content[i+1:]
		n++
	}
	b.WriteByte('\n')
	return b.String()
}

// linesRange returns lines start..end (1-based, inclusive) of text with
// their newlines, as the editor's ranged read does.
func linesRange(text string, start, end int) string {
	start = max(start, 1)
	if end < start {
		return ""
	}
	i := 0
	for line := 1; line < start; line++ {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return ""
		}
		i += j + 1
	}
	from := i
	for line := start; line <= end; line++ {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return text[from:]
		}
		i += j + 1
	}
	return text[from:i]
}
