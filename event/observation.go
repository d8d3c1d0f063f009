package event

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Observation type strings, as sent in the "observation" field.
const (
	ObsRun        = "run"
	ObsRunIPython = "run_ipython"
	ObsRead       = "read"
	ObsWrite      = "write"
	ObsEdit       = "edit"
	ObsError      = "error"
	ObsBrowse     = "browse"
	ObsDownload   = "download"
)

// Observation is the result of one action. Its dynamic type is one of
// *CmdOutput, *IPythonOutput, *FileReadResult, *FileWriteResult,
// *FileEditResult, *ErrorObservation, *BrowserOutput or *FileDownload.
type Observation interface {
	// Type returns the observation type string.
	Type() string
	// Message returns the human-readable summary the host shows in its UI.
	Message() string
	// Text returns the observation's content.
	Text() string
}

// CmdMetadata is the "metadata" of a run observation. Every key is always
// present on the wire; nil pointers encode as null.
type CmdMetadata struct {
	ExitCode          int     `json:"exit_code"`
	PID               int     `json:"pid"`
	Username          *string `json:"username"`
	Hostname          *string `json:"hostname"`
	WorkingDir        *string `json:"working_dir"`
	PyInterpreterPath *string `json:"py_interpreter_path"`
	Prefix            string  `json:"prefix"`
	Suffix            string  `json:"suffix"`
}

// DefaultCmdMetadata returns the metadata of a command that has not
// finished: exit code and pid -1, nothing else known.
func DefaultCmdMetadata() CmdMetadata { return CmdMetadata{ExitCode: -1, PID: -1} }

// CmdOutput is the observation of a "run" action.
type CmdOutput struct {
	Content  string
	Command  string
	Metadata CmdMetadata
	Hidden   bool
}

// IPythonOutput is the observation of a "run_ipython" action.
type IPythonOutput struct {
	Content string
	Code    string
	// ImageURLs are data: URLs of images the cell displayed; nil encodes as null.
	ImageURLs []string
}

// FileReadResult is the observation of a "read" action.
type FileReadResult struct {
	Content    string
	Path       string
	ImplSource string
}

// FileWriteResult is the observation of a "write" action.
type FileWriteResult struct {
	Content string
	Path    string
}

// FileEditResult is the observation of an "edit" action.
type FileEditResult struct {
	Content    string
	Path       string
	PrevExist  bool
	OldContent *string
	NewContent *string
	ImplSource string
	Diff       *string
}

// ErrorObservation is the "error" observation (upstream's ErrorObservation):
// a failure the agent can act on.
type ErrorObservation struct {
	Content string
	ErrorID string
}

// BrowserOutput is the observation of "browse" and "browse_interactive".
type BrowserOutput struct {
	Content                string
	URL                    string
	TriggerByAction        string
	Screenshot             string
	ScreenshotPath         *string
	SetOfMarks             string
	Error                  bool
	GoalImageURLs          []string
	OpenPagesURLs          []string
	ActivePageIndex        int
	DOMObject              map[string]any
	AXTreeObject           map[string]any
	ExtraElementProperties map[string]any
	LastBrowserAction      string
	LastBrowserActionError string
	FocusedElementBID      string
	FilterVisibleOnly      bool
}

// FileDownload reports a file the browser downloaded.
type FileDownload struct {
	Content  string
	FilePath string
}

// Type implements Observation.
func (*CmdOutput) Type() string { return ObsRun }

// Type implements Observation.
func (*IPythonOutput) Type() string { return ObsRunIPython }

// Type implements Observation.
func (*FileReadResult) Type() string { return ObsRead }

// Type implements Observation.
func (*FileWriteResult) Type() string { return ObsWrite }

// Type implements Observation.
func (*FileEditResult) Type() string { return ObsEdit }

// Type implements Observation.
func (*ErrorObservation) Type() string { return ObsError }

// Type implements Observation.
func (*BrowserOutput) Type() string { return ObsBrowse }

// Type implements Observation.
func (*FileDownload) Type() string { return ObsDownload }

// Message implements Observation.
func (o *CmdOutput) Message() string {
	return fmt.Sprintf("Command `%s` executed with exit code %d.", o.Command, o.Metadata.ExitCode)
}

// Message implements Observation.
func (*IPythonOutput) Message() string { return "Code executed in IPython cell." }

// Message implements Observation.
func (o *FileReadResult) Message() string { return fmt.Sprintf("I read the file %s.", o.Path) }

// Message implements Observation.
func (o *FileWriteResult) Message() string { return fmt.Sprintf("I wrote to the file %s.", o.Path) }

// Message implements Observation.
func (o *FileEditResult) Message() string { return fmt.Sprintf("I edited the file %s.", o.Path) }

// Message implements Observation.
func (o *ErrorObservation) Message() string { return o.Content }

// Message implements Observation.
func (o *BrowserOutput) Message() string { return "Visited " + o.URL }

// Message implements Observation.
func (o *FileDownload) Message() string {
	return "Downloaded the file at location: " + o.FilePath
}

// Text implements Observation.
func (o *CmdOutput) Text() string { return o.Content }

// Text implements Observation.
func (o *IPythonOutput) Text() string { return o.Content }

// Text implements Observation.
func (o *FileReadResult) Text() string { return o.Content }

// Text implements Observation.
func (o *FileWriteResult) Text() string { return o.Content }

// Text implements Observation.
func (o *FileEditResult) Text() string { return o.Content }

// Text implements Observation.
func (o *ErrorObservation) Text() string { return o.Content }

// Text implements Observation.
func (o *BrowserOutput) Text() string { return o.Content }

// Text implements Observation.
func (o *FileDownload) Text() string { return o.Content }

// Success reports the "success" key of a run observation.
func (o *CmdOutput) Success() bool { return o.Metadata.ExitCode == 0 }

// The extras of each type, in the order upstream emits them. Keeping them in
// separate structs is what guarantees no undocumented key reaches the host.
type (
	cmdExtras struct {
		Command  string      `json:"command"`
		Metadata CmdMetadata `json:"metadata"`
		Hidden   bool        `json:"hidden"`
	}
	ipythonExtras struct {
		Code      string   `json:"code"`
		ImageURLs []string `json:"image_urls"`
	}
	readExtras struct {
		Path       string `json:"path"`
		ImplSource string `json:"impl_source"`
	}
	writeExtras struct {
		Path string `json:"path"`
	}
	editExtras struct {
		Path       string  `json:"path"`
		PrevExist  bool    `json:"prev_exist"`
		OldContent *string `json:"old_content"`
		NewContent *string `json:"new_content"`
		ImplSource string  `json:"impl_source"`
		Diff       *string `json:"diff"`
		DiffCache  *string `json:"_diff_cache"`
	}
	errorExtras struct {
		ErrorID string `json:"error_id"`
	}
	browseExtras struct {
		URL                    string         `json:"url"`
		TriggerByAction        string         `json:"trigger_by_action"`
		Screenshot             string         `json:"screenshot"`
		ScreenshotPath         *string        `json:"screenshot_path"`
		SetOfMarks             string         `json:"set_of_marks"`
		Error                  bool           `json:"error"`
		GoalImageURLs          []string       `json:"goal_image_urls"`
		OpenPagesURLs          []string       `json:"open_pages_urls"`
		ActivePageIndex        int            `json:"active_page_index"`
		DOMObject              map[string]any `json:"dom_object"`
		AXTreeObject           map[string]any `json:"axtree_object"`
		ExtraElementProperties map[string]any `json:"extra_element_properties"`
		LastBrowserAction      string         `json:"last_browser_action"`
		LastBrowserActionError string         `json:"last_browser_action_error"`
		FocusedElementBID      string         `json:"focused_element_bid"`
		FilterVisibleOnly      bool           `json:"filter_visible_only"`
	}
	downloadExtras struct {
		FilePath string `json:"file_path"`
	}
)

// wireObservation is the observation envelope on the wire.
type wireObservation struct {
	Message     string          `json:"message"`
	Observation string          `json:"observation"`
	Content     string          `json:"content"`
	Extras      json.RawMessage `json:"extras"`
	Success     *bool           `json:"success,omitempty"`
}

// extras returns the extras struct of o and its "success" value (nil when
// the type has none).
func extras(o Observation) (any, *bool, error) {
	switch v := o.(type) {
	case *CmdOutput:
		ok := v.Success()
		return cmdExtras{v.Command, v.Metadata, v.Hidden}, &ok, nil
	case *IPythonOutput:
		ok := true
		return ipythonExtras{v.Code, v.ImageURLs}, &ok, nil
	case *FileReadResult:
		return readExtras{v.Path, orDefault(v.ImplSource, ImplDefault)}, nil, nil
	case *FileWriteResult:
		return writeExtras{v.Path}, nil, nil
	case *FileEditResult:
		return editExtras{Path: v.Path, PrevExist: v.PrevExist, OldContent: v.OldContent,
			NewContent: v.NewContent, ImplSource: orDefault(v.ImplSource, ImplOHACI), Diff: v.Diff}, nil, nil
	case *ErrorObservation:
		return errorExtras{v.ErrorID}, nil, nil
	case *BrowserOutput:
		return browseExtras{
			URL: v.URL, TriggerByAction: v.TriggerByAction, Screenshot: v.Screenshot,
			ScreenshotPath: v.ScreenshotPath, SetOfMarks: v.SetOfMarks, Error: v.Error,
			GoalImageURLs: nonNilList(v.GoalImageURLs), OpenPagesURLs: nonNilList(v.OpenPagesURLs),
			ActivePageIndex: v.ActivePageIndex, DOMObject: nonNilMap(v.DOMObject),
			AXTreeObject: nonNilMap(v.AXTreeObject), ExtraElementProperties: nonNilMap(v.ExtraElementProperties),
			LastBrowserAction: v.LastBrowserAction, LastBrowserActionError: v.LastBrowserActionError,
			FocusedElementBID: v.FocusedElementBID, FilterVisibleOnly: v.FilterVisibleOnly,
		}, nil, nil
	case *FileDownload:
		return downloadExtras{v.FilePath}, nil, nil
	}
	return nil, nil, fmt.Errorf("encode observation: unknown type %T", o)
}

// EncodeObservation serialises an observation exactly as the host expects:
// message, observation, content, extras, and success for run and
// run_ipython. HTML characters are not escaped, as upstream does not.
func EncodeObservation(o Observation) ([]byte, error) {
	ex, success, err := extras(o)
	if err != nil {
		return nil, err
	}
	exJSON, err := marshalNoEscape(ex)
	if err != nil {
		return nil, fmt.Errorf("encode %s observation extras: %w", o.Type(), err)
	}
	return marshalNoEscape(wireObservation{
		Message:     o.Message(),
		Observation: o.Type(),
		Content:     o.Text(),
		Extras:      exJSON,
		Success:     success,
	})
}

// DecodeObservation parses a serialised observation, as a client does.
func DecodeObservation(data []byte) (Observation, error) {
	var w wireObservation
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("decode observation: %w", err)
	}
	if len(w.Extras) == 0 || bytes.Equal(w.Extras, []byte("null")) {
		w.Extras = []byte("{}")
	}
	into := func(v any) error {
		if err := json.Unmarshal(w.Extras, v); err != nil {
			return fmt.Errorf("decode %s observation extras: %w", w.Observation, err)
		}
		return nil
	}
	switch w.Observation {
	case ObsRun:
		ex := cmdExtras{Metadata: DefaultCmdMetadata()}
		if err := into(&ex); err != nil {
			return nil, err
		}
		return &CmdOutput{Content: w.Content, Command: ex.Command, Metadata: ex.Metadata, Hidden: ex.Hidden}, nil
	case ObsRunIPython:
		var ex ipythonExtras
		if err := into(&ex); err != nil {
			return nil, err
		}
		return &IPythonOutput{Content: w.Content, Code: ex.Code, ImageURLs: ex.ImageURLs}, nil
	case ObsRead:
		var ex readExtras
		if err := into(&ex); err != nil {
			return nil, err
		}
		return &FileReadResult{Content: w.Content, Path: ex.Path, ImplSource: ex.ImplSource}, nil
	case ObsWrite:
		var ex writeExtras
		if err := into(&ex); err != nil {
			return nil, err
		}
		return &FileWriteResult{Content: w.Content, Path: ex.Path}, nil
	case ObsEdit:
		var ex editExtras
		if err := into(&ex); err != nil {
			return nil, err
		}
		return &FileEditResult{Content: w.Content, Path: ex.Path, PrevExist: ex.PrevExist,
			OldContent: ex.OldContent, NewContent: ex.NewContent, ImplSource: ex.ImplSource, Diff: ex.Diff}, nil
	case ObsError:
		var ex errorExtras
		if err := into(&ex); err != nil {
			return nil, err
		}
		return &ErrorObservation{Content: w.Content, ErrorID: ex.ErrorID}, nil
	case ObsBrowse:
		ex := browseExtras{ActivePageIndex: -1}
		if err := into(&ex); err != nil {
			return nil, err
		}
		return &BrowserOutput{
			Content: w.Content, URL: ex.URL, TriggerByAction: ex.TriggerByAction, Screenshot: ex.Screenshot,
			ScreenshotPath: ex.ScreenshotPath, SetOfMarks: ex.SetOfMarks, Error: ex.Error,
			GoalImageURLs: ex.GoalImageURLs, OpenPagesURLs: ex.OpenPagesURLs, ActivePageIndex: ex.ActivePageIndex,
			DOMObject: ex.DOMObject, AXTreeObject: ex.AXTreeObject, ExtraElementProperties: ex.ExtraElementProperties,
			LastBrowserAction: ex.LastBrowserAction, LastBrowserActionError: ex.LastBrowserActionError,
			FocusedElementBID: ex.FocusedElementBID, FilterVisibleOnly: ex.FilterVisibleOnly,
		}, nil
	case ObsDownload:
		var ex downloadExtras
		if err := into(&ex); err != nil {
			return nil, err
		}
		return &FileDownload{Content: w.Content, FilePath: ex.FilePath}, nil
	}
	return nil, fmt.Errorf("decode observation: unknown type %q", w.Observation)
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func nonNilList(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// StrPtr returns a pointer to s, for the optional string fields.
func StrPtr(s string) *string { return &s }
