package api

import "time"

// Session describes a shell session (GET /sessions, GET /sessions/{id}).
type Session struct {
	ID      string    `json:"id"`
	Cwd     string    `json:"cwd"`
	Started time.Time `json:"started"`
	PID     int       `json:"pid"`
	// RunningCommand is the command that runs now; nil when none.
	RunningCommand *CommandBrief `json:"running_command"`
}

// CommandBrief names a running command.
type CommandBrief struct {
	ID      int64     `json:"id"`
	Command string    `json:"command"`
	Started time.Time `json:"started"`
}

// Command is the state of a command started through the sessions API.
type Command struct {
	ID      int64  `json:"id"`
	Session string `json:"session"`
	Command string `json:"command"`
	// Running is true until the prompt came back or the shell died.
	Running bool `json:"running"`
	// ExitCode is nil while the command runs.
	ExitCode *int `json:"exit_code"`
	// ShellDied reports that the shell exited before the command finished;
	// ExitCode is then the shell's exit status.
	ShellDied bool       `json:"shell_died"`
	Started   time.Time  `json:"started"`
	Finished  *time.Time `json:"finished"`
	// Metadata is what the prompt reported after the command; nil while it
	// runs.
	Metadata *CommandMeta `json:"metadata"`
	// Output is the span of output still kept.
	Output OutputRange `json:"output"`
}

// CommandMeta is what the prompt reported after a command.
type CommandMeta struct {
	ExitCode          int    `json:"exit_code"`
	PID               int    `json:"pid"`
	Username          string `json:"username"`
	Hostname          string `json:"hostname"`
	WorkingDir        string `json:"working_dir"`
	PyInterpreterPath string `json:"py_interpreter_path"`
}

// OutputRange is the span of a command's output still kept, in byte
// offsets from its first byte of output.
type OutputRange struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

// OutputChunk answers an output read (GET .../commands/{cid}/output).
type OutputChunk struct {
	// Offset is where Data starts; NextOffset is just after it, where the
	// next read starts.
	Offset     int64 `json:"offset"`
	NextOffset int64 `json:"next_offset"`
	// Lost counts the bytes between the offset asked for and Offset that
	// the server's buffer dropped.
	Lost int64  `json:"lost"`
	Data string `json:"data"`
	// Tail is the text after NextOffset that may still change (the line
	// under the cursor); it is not part of the offsets.
	Tail string `json:"tail"`
	// Done reports that the command finished and Data reaches the end of
	// its output.
	Done bool `json:"done"`
	// ExitCode is set once Done.
	ExitCode *int `json:"exit_code"`
}

// CreateSessionRequest is the body of POST /sessions; every field is
// optional.
type CreateSessionRequest struct {
	// ID names the session; empty lets the server pick one.
	ID string `json:"id,omitempty"`
	// Cwd is the starting directory; empty means the workspace.
	Cwd string `json:"cwd,omitempty"`
	// Env adds to (or overrides) the shell's environment.
	Env map[string]string `json:"env,omitempty"`
}

// StartCommandRequest is the body of POST /sessions/{id}/commands.
type StartCommandRequest struct {
	Command string `json:"command"`
	// Pipe runs it outside the terminal, its output on a pipe; Cwd and
	// Env (added to the session's environment) apply to it only.
	Pipe bool              `json:"pipe,omitempty"`
	Cwd  string            `json:"cwd,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
}

// InputRequest is the body of POST /sessions/{id}/input: either Text (with
// Enter, true when left out) or Key, a control key such as "C-c".
type InputRequest struct {
	Text  *string `json:"text,omitempty"`
	Key   string  `json:"key,omitempty"`
	Enter *bool   `json:"enter,omitempty"`
}

// SignalRequest is the body of POST /sessions/{id}/signal: SIGINT, SIGTERM
// or SIGKILL (the "SIG" may be left out, and case does not matter).
type SignalRequest struct {
	Signal string `json:"signal"`
	// Command names a running piped command to signal; without it, the
	// terminal's command is.
	Command *int64 `json:"command,omitempty"`
}

// ResizeRequest is the body of POST /sessions/{id}/resize.
type ResizeRequest struct {
	Rows uint16 `json:"rows"`
	Cols uint16 `json:"cols"`
}

// AttachResize is the text message that resizes an attached terminal
// (GET /sessions/{id}/attach); Type is "resize".
type AttachResize struct {
	Type string `json:"type"`
	Rows uint16 `json:"rows"`
	Cols uint16 `json:"cols"`
}

// The events of a command's output stream (GET .../commands/{cid}/stream,
// Server-Sent Events). Each output event carries the offset after its data
// as its id, so a client that reconnects with Last-Event-ID resumes where
// it stopped.
const (
	// EventOutput carries an OutputEvent.
	EventOutput = "output"
	// EventLost carries a LostEvent: output the server's buffer dropped.
	EventLost = "lost"
	// EventTail carries a TailEvent: the line still changing.
	EventTail = "tail"
	// EventExit carries the finished Command; it is the last event.
	EventExit = "exit"
)

// The fields of the stream's payloads stand in alphabetical order, the
// order the server has always written them in.

// OutputEvent is the payload of an EventOutput.
type OutputEvent struct {
	Data   string `json:"data"`
	Offset int64  `json:"offset"`
}

// LostEvent is the payload of an EventLost: the bytes from From to To were
// dropped.
type LostEvent struct {
	Bytes int64 `json:"bytes"`
	From  int64 `json:"from"`
	To    int64 `json:"to"`
}

// TailEvent is the payload of an EventTail: Tail is the text after Offset
// that may still change.
type TailEvent struct {
	Offset int64  `json:"offset"`
	Tail   string `json:"tail"`
}
