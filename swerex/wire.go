package swerex

// SWE-ReX's request and reply bodies (swerex.runtime.abstract), as the
// client sends and reads them. Optional fields are pointers where upstream
// tells None from a value.

// createSessionRequest is CreateBashSessionRequest.
type createSessionRequest struct {
	StartupSource  []string `json:"startup_source"`
	Session        string   `json:"session"`
	SessionType    string   `json:"session_type"`
	StartupTimeout *float64 `json:"startup_timeout"`
}

type createSessionResponse struct {
	Output      string `json:"output"`
	SessionType string `json:"session_type"`
}

// action is BashAction or BashInterruptAction, told apart by ActionType.
type action struct {
	ActionType string   `json:"action_type"`
	Session    string   `json:"session"`
	Timeout    *float64 `json:"timeout"`
	Expect     []string `json:"expect"`

	// BashAction.
	Command              *string `json:"command"`
	IsInteractiveCommand bool    `json:"is_interactive_command"`
	IsInteractiveQuit    bool    `json:"is_interactive_quit"`
	Check                string  `json:"check"`
	ErrorMsg             string  `json:"error_msg"`

	// BashInterruptAction.
	NRetry *int `json:"n_retry"`
}

// observation is BashObservation.
type observation struct {
	Output        string `json:"output"`
	ExitCode      *int   `json:"exit_code"`
	FailureReason string `json:"failure_reason"`
	ExpectString  string `json:"expect_string"`
	SessionType   string `json:"session_type"`
}

type closeSessionRequest struct {
	Session     string `json:"session"`
	SessionType string `json:"session_type"`
}

type sessionTypeOnly struct {
	SessionType string `json:"session_type"`
}

// executeRequest is Command: a subprocess, as subprocess.run runs one.
// Command is a string or a list of strings.
type executeRequest struct {
	Command            any               `json:"command"`
	Timeout            *float64          `json:"timeout"`
	Shell              bool              `json:"shell"`
	Check              bool              `json:"check"`
	ErrorMsg           string            `json:"error_msg"`
	Env                map[string]string `json:"env"`
	Cwd                *string           `json:"cwd"`
	MergeOutputStreams bool              `json:"merge_output_streams"`
}

type executeResponse struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode *int   `json:"exit_code"`
}

type readFileRequest struct {
	Path     *string `json:"path"`
	Encoding *string `json:"encoding"`
	Errors   *string `json:"errors"`
}

type readFileResponse struct {
	Content string `json:"content"`
}

type writeFileRequest struct {
	Content *string `json:"content"`
	Path    *string `json:"path"`
}

type isAliveResponse struct {
	IsAlive bool   `json:"is_alive"`
	Message string `json:"message"`
}

// psOneMarker is the expect_string of a command that ended at the prompt:
// upstream reports the PS1 it set, and clients may compare against it.
const psOneMarker = "SHELLPS1PREFIX"
