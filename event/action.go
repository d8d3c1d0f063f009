package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Action type strings, as sent in the "action" field.
const (
	TypeRun               = "run"
	TypeRunIPython        = "run_ipython"
	TypeRead              = "read"
	TypeWrite             = "write"
	TypeEdit              = "edit"
	TypeBrowse            = "browse"
	TypeBrowseInteractive = "browse_interactive"
)

// hostOnlyActions are action types the host knows but never expects the
// server to execute; decoding them gives ErrUnsupportedAction rather than
// "unknown action".
var hostOnlyActions = map[string]bool{
	"message": true, "system": true, "think": true, "finish": true, "reject": true,
	"delegate": true, "recall": true, "change_agent_state": true, "condensation": true,
	"condensation_request": true, "task_tracking": true, "loop_recovery": true,
	"null": true, "call_tool_mcp": true,
}

// Implementation sources of file actions.
const (
	ImplDefault      = "default"
	ImplOHACI        = "oh_aci"
	ImplLLMBasedEdit = "llm_based_edit"
)

// Action is one decoded action. Its dynamic type is one of *CmdRun,
// *IPythonRunCell, *FileRead, *FileWrite, *FileEdit, *BrowseURL or
// *BrowseInteractive.
type Action interface {
	// Type returns the action type string ("run", "read", ...).
	Type() string
	// ActionHeader returns the fields every action carries outside its args.
	ActionHeader() *Header
}

// Header holds what an action carries beside its arguments. Only Timeout
// affects execution. Embedding it gives an action type its ActionHeader method.
type Header struct {
	// ID is the host's event id, when it sent one.
	ID *int64
	// Timeout is the hard timeout in seconds the host set; nil when absent.
	Timeout *float64
}

// Header implements Action.
func (h *Header) ActionHeader() *Header { return h }

// HardTimeout returns the hard timeout as a duration, or 0 when none was set
// (a zero or negative timeout also means none, as upstream treats it).
func (h *Header) HardTimeout() time.Duration {
	if h.Timeout == nil || *h.Timeout <= 0 {
		return 0
	}
	return time.Duration(*h.Timeout * float64(time.Second))
}

// CmdRun runs a command in the persistent shell ("run").
type CmdRun struct {
	Header            `json:"-"`
	Command           string  `json:"command"`
	IsInput           bool    `json:"is_input"`
	Thought           string  `json:"thought"`
	Blocking          bool    `json:"blocking"`
	IsStatic          bool    `json:"is_static"`
	Cwd               *string `json:"cwd"`
	Hidden            bool    `json:"hidden"`
	ConfirmationState string  `json:"confirmation_state"`
	SecurityRisk      Risk    `json:"security_risk"`
}

// IPythonRunCell runs Python code in the Jupyter kernel ("run_ipython").
type IPythonRunCell struct {
	Header            `json:"-"`
	Code              string `json:"code"`
	Thought           string `json:"thought"`
	IncludeExtra      bool   `json:"include_extra"`
	ConfirmationState string `json:"confirmation_state"`
	SecurityRisk      Risk   `json:"security_risk"`
	KernelInitCode    string `json:"kernel_init_code"`
}

// FileRead reads a file ("read").
type FileRead struct {
	Header       `json:"-"`
	Path         string `json:"path"`
	Start        int    `json:"start"`
	End          int    `json:"end"`
	Thought      string `json:"thought"`
	SecurityRisk Risk   `json:"security_risk"`
	ImplSource   string `json:"impl_source"`
	ViewRange    []int  `json:"view_range"`
}

// FileWrite writes a file ("write").
type FileWrite struct {
	Header       `json:"-"`
	Path         string `json:"path"`
	Content      string `json:"content"`
	Start        int    `json:"start"`
	End          int    `json:"end"`
	Thought      string `json:"thought"`
	SecurityRisk Risk   `json:"security_risk"`
}

// FileEdit runs a command of the file editor ("edit").
type FileEdit struct {
	Header       `json:"-"`
	Path         string      `json:"path"`
	Command      string      `json:"command"`
	FileText     *string     `json:"file_text"`
	OldStr       *string     `json:"old_str"`
	NewStr       *string     `json:"new_str"`
	InsertLine   *InsertLine `json:"insert_line"`
	Content      string      `json:"content"`
	Start        int         `json:"start"`
	End          int         `json:"end"`
	Thought      string      `json:"thought"`
	SecurityRisk Risk        `json:"security_risk"`
	ImplSource   string      `json:"impl_source"`
}

// BrowseURL opens a URL in the browser ("browse").
type BrowseURL struct {
	Header       `json:"-"`
	URL          string `json:"url"`
	Thought      string `json:"thought"`
	SecurityRisk Risk   `json:"security_risk"`
	ReturnAXTree bool   `json:"return_axtree"`
}

// BrowseInteractive runs BrowserGym actions ("browse_interactive").
type BrowseInteractive struct {
	Header                  `json:"-"`
	BrowserActions          string `json:"browser_actions"`
	Thought                 string `json:"thought"`
	BrowsergymSendMsgToUser string `json:"browsergym_send_msg_to_user"`
	SecurityRisk            Risk   `json:"security_risk"`
	ReturnAXTree            bool   `json:"return_axtree"`
}

// Type implements Action.
func (*CmdRun) Type() string { return TypeRun }

// Type implements Action.
func (*IPythonRunCell) Type() string { return TypeRunIPython }

// Type implements Action.
func (*FileRead) Type() string { return TypeRead }

// Type implements Action.
func (*FileWrite) Type() string { return TypeWrite }

// Type implements Action.
func (*FileEdit) Type() string { return TypeEdit }

// Type implements Action.
func (*BrowseURL) Type() string { return TypeBrowse }

// Type implements Action.
func (*BrowseInteractive) Type() string { return TypeBrowseInteractive }

// NewCmdRun returns a "run" action with the host's defaults.
func NewCmdRun(command string) *CmdRun {
	return &CmdRun{Command: command, ConfirmationState: "confirmed", SecurityRisk: RiskUnknown}
}

// NewFileRead returns a "read" action of the whole file with the host's
// defaults (impl_source "default").
func NewFileRead(path string) *FileRead {
	return &FileRead{Path: path, End: -1, SecurityRisk: RiskUnknown, ImplSource: ImplDefault}
}

// NewFileWrite returns a "write" action replacing the whole file.
func NewFileWrite(path, content string) *FileWrite {
	return &FileWrite{Path: path, Content: content, End: -1, SecurityRisk: RiskUnknown}
}

// NewFileEdit returns an "edit" action of the oh_aci editor; set the
// command's parameters (FileText, OldStr, NewStr, InsertLine) on it.
func NewFileEdit(command, path string) *FileEdit {
	return &FileEdit{Command: command, Path: path, Start: 1, End: -1, SecurityRisk: RiskUnknown, ImplSource: ImplOHACI}
}

// Risk is the action's security risk (-1 unknown, 0 low, 1 medium, 2 high).
// Values the host could not have produced decode as unknown, as upstream
// drops them.
type Risk int

// RiskUnknown is the default security risk.
const RiskUnknown Risk = -1

// UnmarshalJSON implements json.Unmarshaler leniently.
func (r *Risk) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err != nil || n < -1 || n > 2 {
		*r = RiskUnknown
		return nil
	}
	*r = Risk(n)
	return nil
}

// InsertLine is the editor's insert_line, which the host may send as a JSON
// number or as a string; a string that is not an integer must reach the
// editor so it can report it.
type InsertLine struct {
	// Raw is the value as text: the number's digits or the string's content.
	Raw string
	// Quoted reports whether the host sent a string.
	Quoted bool
}

// Int returns the value as an integer and whether it is one.
func (l InsertLine) Int() (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(l.Raw))
	return n, err == nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (l *InsertLine) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		l.Quoted = true
		return json.Unmarshal(b, &l.Raw)
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("insert_line must be an integer or a string: %w", err)
	}
	l.Raw = n.String()
	return nil
}

// MarshalJSON implements json.Marshaler.
func (l InsertLine) MarshalJSON() ([]byte, error) {
	if l.Quoted {
		return json.Marshal(l.Raw)
	}
	if _, ok := l.Int(); !ok {
		return json.Marshal(l.Raw)
	}
	return []byte(l.Raw), nil
}

// ErrUnsupportedAction is returned by DecodeAction for action types that
// exist on the host but are never executed by a server.
var ErrUnsupportedAction = errors.New("action type is not executed by the action server")

// wireAction is the action envelope on the wire.
type wireAction struct {
	ID      *int64          `json:"id,omitempty"`
	Action  *string         `json:"action"`
	Args    json.RawMessage `json:"args,omitempty"`
	Timeout *float64        `json:"timeout,omitempty"`
}

// DecodeAction decodes one serialised action (the value of "action" in an
// /execute_action request). Missing arguments take the host's defaults and
// unknown argument keys are ignored.
func DecodeAction(data []byte) (Action, error) {
	var w wireAction
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("decode action: %w", err)
	}
	if w.Action == nil {
		return nil, errors.New("decode action: 'action' key is missing")
	}
	a, err := newAction(*w.Action)
	if err != nil {
		return nil, err
	}
	var present map[string]json.RawMessage
	if len(w.Args) > 0 && !bytes.Equal(bytes.TrimSpace(w.Args), []byte("null")) {
		if err := json.Unmarshal(w.Args, &present); err != nil {
			return nil, fmt.Errorf("decode %s action args: %w", *w.Action, err)
		}
		if err := json.Unmarshal(w.Args, a); err != nil {
			return nil, fmt.Errorf("decode %s action args: %w", *w.Action, err)
		}
	}
	for _, key := range requiredArgs[*w.Action] {
		if v, ok := present[key]; !ok || bytes.Equal(v, []byte("null")) {
			return nil, fmt.Errorf("decode %s action: argument %q is required", *w.Action, key)
		}
	}
	h := a.ActionHeader()
	h.ID = w.ID
	h.Timeout = w.Timeout
	return a, nil
}

// newAction returns an action of the given type holding the host's defaults.
func newAction(typ string) (Action, error) {
	switch typ {
	case TypeRun:
		return NewCmdRun(""), nil
	case TypeRunIPython:
		return &IPythonRunCell{IncludeExtra: true, ConfirmationState: "confirmed", SecurityRisk: RiskUnknown}, nil
	case TypeRead:
		return NewFileRead(""), nil
	case TypeWrite:
		return NewFileWrite("", ""), nil
	case TypeEdit:
		return NewFileEdit("", ""), nil
	case TypeBrowse:
		return &BrowseURL{SecurityRisk: RiskUnknown}, nil
	case TypeBrowseInteractive:
		return &BrowseInteractive{SecurityRisk: RiskUnknown}, nil
	}
	if hostOnlyActions[typ] {
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedAction, typ)
	}
	return nil, fmt.Errorf("decode action: unknown action type %q", typ)
}

// requiredArgs lists, per action type, the arguments that have no default
// upstream: an action without them fails there, so it fails here too.
var requiredArgs = map[string][]string{
	TypeRun:               {"command"},
	TypeRunIPython:        {"code"},
	TypeRead:              {"path"},
	TypeWrite:             {"path", "content"},
	TypeEdit:              {"path"},
	TypeBrowse:            {"url"},
	TypeBrowseInteractive: {"browser_actions"},
}

// EncodeAction serialises an action the way the host does: type, every
// argument, and the timeout when set.
func EncodeAction(a Action) ([]byte, error) {
	args, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encode %s action: %w", a.Type(), err)
	}
	typ := a.Type()
	h := a.ActionHeader()
	return json.Marshal(wireAction{ID: h.ID, Action: &typ, Args: args, Timeout: h.Timeout})
}
