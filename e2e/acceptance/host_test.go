package acceptance

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file is the host side: actions serialised as the host's
// event_to_dict does, sent as send_action_for_execution sends them, and
// answers read back as observation_from_dict reads them. Where the host
// would raise, the test fails with the host's exception name.

// cmdRun is a CmdRunAction.
type cmdRun struct {
	command  string
	isInput  bool
	blocking bool
	hidden   bool
	timeout  float64 // 0 means unset
}

// run is CmdRunAction(command).
func run(command string) *cmdRun { return &cmdRun{command: command} }

// input is CmdRunAction(text, is_input=True).
func input(text string) *cmdRun { return &cmdRun{command: text, isInput: true} }

// setHardTimeout is Event.set_hard_timeout(seconds): the action gets a
// timeout and becomes blocking.
func (a *cmdRun) setHardTimeout(seconds float64) *cmdRun {
	a.timeout, a.blocking = seconds, true
	return a
}

// pyFloat is a float that encodes as Python's json.dumps prints floats
// ("120.0", "2.5"): the host's timeouts are floats.
type pyFloat float64

func (f pyFloat) MarshalJSON() ([]byte, error) {
	s := strconv.FormatFloat(float64(f), 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return []byte(s), nil
}

// actionDict is event_to_dict(action) for an action without id, source or
// cause (the tests run actions directly, as upstream's tests do).
type actionDict struct {
	Message string  `json:"message"`
	Action  string  `json:"action"`
	Args    any     `json:"args"`
	Timeout pyFloat `json:"timeout"`
}

type cmdRunArgs struct {
	Command           string  `json:"command"`
	IsInput           bool    `json:"is_input"`
	Thought           string  `json:"thought"`
	Blocking          bool    `json:"blocking"`
	IsStatic          bool    `json:"is_static"`
	Cwd               *string `json:"cwd"`
	Hidden            bool    `json:"hidden"`
	ConfirmationState string  `json:"confirmation_state"`
	SecurityRisk      int     `json:"security_risk"`
}

type ipythonArgs struct {
	Code              string `json:"code"`
	Thought           string `json:"thought"`
	IncludeExtra      bool   `json:"include_extra"`
	ConfirmationState string `json:"confirmation_state"`
	SecurityRisk      int    `json:"security_risk"`
	KernelInitCode    string `json:"kernel_init_code"`
}

type fileReadArgs struct {
	Path         string `json:"path"`
	Start        int    `json:"start"`
	End          int    `json:"end"`
	Thought      string `json:"thought"`
	SecurityRisk int    `json:"security_risk"`
	ImplSource   string `json:"impl_source"`
	ViewRange    []int  `json:"view_range"`
}

type fileWriteArgs struct {
	Path         string `json:"path"`
	Content      string `json:"content"`
	Start        int    `json:"start"`
	End          int    `json:"end"`
	Thought      string `json:"thought"`
	SecurityRisk int    `json:"security_risk"`
}

type fileEditArgs struct {
	Path         string  `json:"path"`
	Command      string  `json:"command"`
	FileText     *string `json:"file_text"`
	OldStr       *string `json:"old_str"`
	NewStr       *string `json:"new_str"`
	InsertLine   any     `json:"insert_line"`
	Content      string  `json:"content"`
	Start        int     `json:"start"`
	End          int     `json:"end"`
	Thought      string  `json:"thought"`
	SecurityRisk int     `json:"security_risk"`
	ImplSource   string  `json:"impl_source"`
}

// fileEdit is a FileEditAction with its default impl_source, oh_aci. A nil
// string is Python's None, which the host sends as null.
type fileEdit struct {
	command  string
	path     string
	fileText *string
	oldStr   *string
	newStr   *string
	// insertLine is nil (None), an int, or a string: the action's field
	// is typed int, but nothing stops an agent's tool call from giving a
	// string, and the host sends whatever it holds.
	insertLine any
}

// strp is a Python str where the action's field may also be None.
func strp(s string) *string { return &s }

// cmdMetadata is CmdOutputMetadata with its defaults.
type cmdMetadata struct {
	ExitCode          int     `json:"exit_code"`
	PID               int     `json:"pid"`
	Username          *string `json:"username"`
	Hostname          *string `json:"hostname"`
	WorkingDir        *string `json:"working_dir"`
	PyInterpreterPath *string `json:"py_interpreter_path"`
	Prefix            string  `json:"prefix"`
	Suffix            string  `json:"suffix"`
}

// observation is what observation_from_dict builds.
type observation struct {
	r *runtime

	Kind    string // "run", "error", "read", "write", ...
	Content string
	Command string
	Hidden  bool
	ErrorID string
	Path    string
	// ImplSource is a read or edit observation's impl_source.
	ImplSource string
	// Browser holds a browse observation's fields.
	Browser browserOutput
	// FilePath is a download observation's file_path.
	FilePath string

	metadata cmdMetadata
	body     string // the server's answer, for failure messages
}

// String shows the server's answer in assertion messages.
func (o *observation) String() string {
	b := o.body
	if len(b) > 2000 {
		b = b[:1000] + " [...] " + b[len(b)-1000:]
	}
	return "server answered: " + b
}

// exitCode is CmdOutputObservation.exit_code. On another observation the
// host's test would die with an AttributeError.
func (o *observation) exitCode() int {
	o.r.t.Helper()
	o.mustBeRun("exit_code")
	return o.metadata.ExitCode
}

// meta is CmdOutputObservation.metadata.
func (o *observation) meta() cmdMetadata {
	o.r.t.Helper()
	o.mustBeRun("metadata")
	return o.metadata
}

func (o *observation) mustBeRun(attr string) {
	o.r.t.Helper()
	if o.Kind != "run" {
		o.r.t.Fatalf("AttributeError: %q observation has no attribute %q (upstream expects a CmdOutputObservation); %v", o.Kind, attr, o)
	}
}

// workingDir is metadata.working_dir, "" when None.
func (m cmdMetadata) workingDir() string {
	if m.WorkingDir == nil {
		return ""
	}
	return *m.WorkingDir
}

// run is runtime.run_action(CmdRunAction): send_action_for_execution.
func (r *runtime) run(a *cmdRun) *observation {
	r.t.Helper()
	o, err := r.tryRun(a)
	if err != nil {
		r.t.Fatalf("%s: %v", a.command, err)
	}
	return o
}

// runCmd is the suite's _run_cmd_action: a plain CmdRunAction whose
// observation must be a CmdOutputObservation or an ErrorObservation.
func (r *runtime) runCmd(command string) *observation {
	r.t.Helper()
	o := r.run(run(command))
	if o.Kind != "run" && o.Kind != "error" {
		r.t.Fatalf("%s: observation %q is neither CmdOutputObservation nor ErrorObservation; %v", command, o.Kind, o)
	}
	return o
}

func (r *runtime) tryRun(a *cmdRun) (*observation, error) {
	timeout, blocking := a.timeout, a.blocking
	if timeout == 0 {
		if blocking {
			return nil, errors.New("RuntimeError: Blocking command with no timeout set")
		}
		// The host's default, which does not block.
		timeout, blocking = sandboxTimeout, false
	}
	return r.execute(actionDict{
		Message: "Running command: " + a.command,
		Action:  "run",
		Args: cmdRunArgs{Command: a.command, IsInput: a.isInput, Blocking: blocking, Hidden: a.hidden,
			ConfirmationState: "confirmed", SecurityRisk: -1},
		Timeout: pyFloat(timeout),
	}, a.hidden)
}

// runIPython sends an IPythonRunCellAction.
func (r *runtime) runIPython(code string) (*observation, error) {
	return r.execute(actionDict{
		Message: "Running Python code interactively: " + code,
		Action:  "run_ipython",
		Args: ipythonArgs{Code: code, IncludeExtra: true, ConfirmationState: "confirmed",
			SecurityRisk: -1},
		Timeout: sandboxTimeout,
	}, false)
}

// read sends FileReadAction(path).
func (r *runtime) read(path string) *observation {
	r.t.Helper()
	o, err := r.execute(actionDict{
		Message: "Reading file: " + path,
		Action:  "read",
		Args:    fileReadArgs{Path: path, End: -1, SecurityRisk: -1, ImplSource: "default"},
		Timeout: sandboxTimeout,
	}, false)
	if err != nil {
		r.t.Fatalf("read %s: %v", path, err)
	}
	return o
}

// write sends FileWriteAction(path, content).
func (r *runtime) write(path, content string) *observation {
	r.t.Helper()
	o, err := r.execute(actionDict{
		Message: "Writing file: " + path,
		Action:  "write",
		Args:    fileWriteArgs{Path: path, Content: content, End: -1, SecurityRisk: -1},
		Timeout: sandboxTimeout,
	}, false)
	if err != nil {
		r.t.Fatalf("write %s: %v", path, err)
	}
	return o
}

// edit sends a FileEditAction. Its message is empty: the action has no
// message of its own.
func (r *runtime) edit(a fileEdit) *observation {
	r.t.Helper()
	o, err := r.execute(actionDict{
		Message: "",
		Action:  "edit",
		Args: fileEditArgs{Path: a.path, Command: a.command, FileText: a.fileText, OldStr: a.oldStr,
			NewStr: a.newStr, InsertLine: a.insertLine, Start: 1, End: -1, SecurityRisk: -1,
			ImplSource: "oh_aci"},
		Timeout: sandboxTimeout,
	}, false)
	if err != nil {
		r.t.Fatalf("edit %s %s: %v", a.command, a.path, err)
	}
	return o
}

// execute posts {"action": ...} with the host's HTTP timeout (the
// action's plus five seconds) and builds the observation.
func (r *runtime) execute(a actionDict, hidden bool) (*observation, error) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"action": a}); err != nil {
		return nil, err
	}
	r.t.Logf("-> %s %s (timeout %v)", a.Action, clip(a.Message, 200), float64(a.Timeout))
	hc := &http.Client{Timeout: time.Duration((float64(a.Timeout) + 5) * float64(time.Second))}
	resp, err := hc.Post(r.url+"/execute_action", "application/json", &body)
	if err != nil {
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("AgentRuntimeTimeoutError: Runtime failed to return execute_action before the requested timeout of %vs", float64(a.Timeout))
		}
		return nil, fmt.Errorf("httpx error: %w", err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the answer: %w", err)
	}
	if resp.StatusCode >= 400 {
		return nil, fmt.Errorf("RequestHTTPError: HTTP %d; body %s", resp.StatusCode, data)
	}
	o, err := r.observationFromDict(data, hidden)
	if err != nil {
		return nil, err
	}
	r.t.Logf("<- %s exit=%d content=%q prefix=%q suffix=%q", o.Kind, o.metadata.ExitCode,
		clip(o.Content, 300), o.metadata.Prefix, clip(o.metadata.Suffix, 120))
	return o, nil
}

// observationFromDict builds the observation as the host does, with its
// failures: unknown types, missing required fields, and extras the
// observation class does not take (TypeError, except for "run").
func (r *runtime) observationFromDict(data []byte, hidden bool) (*observation, error) {
	var raw struct {
		Observation *string                    `json:"observation"`
		Content     *string                    `json:"content"`
		Extras      map[string]json.RawMessage `json:"extras"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("JSONDecodeError: %v in %s", err, data)
	}
	if raw.Observation == nil {
		return nil, fmt.Errorf("KeyError: 'observation' key is not found in %s", data)
	}
	o := &observation{r: r, Kind: *raw.Observation, body: string(data)}
	if raw.Content != nil {
		o.Content = *raw.Content
	}
	extras := raw.Extras
	if extras == nil {
		extras = map[string]json.RawMessage{}
	}
	if hidden {
		// send_action_for_execution marks the answer to a hidden action.
		extras["hidden"] = json.RawMessage("true")
	}
	delete(extras, "formatted_output_and_error")
	allow := func(keys ...string) error {
		for k := range extras {
			if !slices.Contains(keys, k) {
				return fmt.Errorf("TypeError: %s observation got an unexpected keyword argument %q in %s", o.Kind, k, data)
			}
		}
		return nil
	}
	str := func(key string, dst *string) error {
		v, ok := extras[key]
		if !ok {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("%s observation: extras.%s is not a string: %s", o.Kind, key, v)
		}
		return nil
	}
	switch o.Kind {
	case "run":
		if _, ok := extras["command"]; !ok {
			return nil, fmt.Errorf("TypeError: CmdOutputObservation missing required argument 'command' in %s", data)
		}
		if err := str("command", &o.Command); err != nil {
			return nil, err
		}
		o.metadata = cmdMetadata{ExitCode: -1, PID: -1}
		if m, ok := extras["metadata"]; ok && string(m) != "null" {
			if err := json.Unmarshal(m, &o.metadata); err != nil {
				return nil, fmt.Errorf("ValidationError: CmdOutputMetadata: %v in %s", err, m)
			}
		}
		// Legacy keys the host moves into the metadata.
		if v, ok := extras["exit_code"]; ok {
			_ = json.Unmarshal(v, &o.metadata.ExitCode)
		}
		if v, ok := extras["command_id"]; ok {
			_ = json.Unmarshal(v, &o.metadata.PID)
		}
		if v, ok := extras["hidden"]; ok {
			_ = json.Unmarshal(v, &o.Hidden)
		}
		if !o.Hidden {
			o.Content = truncateLikeHost(o.Content)
		}
	case "error":
		if err := allow("error_id"); err != nil {
			return nil, err
		}
		if err := str("error_id", &o.ErrorID); err != nil {
			return nil, err
		}
	case "read":
		if err := allow("path", "impl_source"); err != nil {
			return nil, err
		}
		if _, ok := extras["path"]; !ok {
			return nil, fmt.Errorf("TypeError: FileReadObservation missing required argument 'path' in %s", data)
		}
		if err := str("path", &o.Path); err != nil {
			return nil, err
		}
		o.ImplSource = "default"
		if err := str("impl_source", &o.ImplSource); err != nil {
			return nil, err
		}
	case "write":
		if err := allow("path"); err != nil {
			return nil, err
		}
		if _, ok := extras["path"]; !ok {
			return nil, fmt.Errorf("TypeError: FileWriteObservation missing required argument 'path' in %s", data)
		}
		if err := str("path", &o.Path); err != nil {
			return nil, err
		}
	case "edit":
		// FileEditObservation: every field has a default, _diff_cache
		// included (a dataclass field, so a keyword argument).
		if err := allow("path", "prev_exist", "old_content", "new_content", "impl_source", "diff", "_diff_cache"); err != nil {
			return nil, err
		}
		if err := str("path", &o.Path); err != nil {
			return nil, err
		}
		o.ImplSource = "llm_based_edit"
		if err := str("impl_source", &o.ImplSource); err != nil {
			return nil, err
		}
	case "run_ipython":
		if err := allow("code", "image_urls"); err != nil {
			return nil, err
		}
	case "browse":
		// BrowserOutputObservation: url and trigger_by_action are
		// required, every other field has a default.
		o.body = shortBrowseBody(data)
		if err := allow(browserOutputFields...); err != nil {
			return nil, err
		}
		for _, k := range []string{"url", "trigger_by_action"} {
			if _, ok := extras[k]; !ok {
				return nil, fmt.Errorf("TypeError: BrowserOutputObservation missing required argument %q in %s", k, o.body)
			}
		}
		o.Browser = browserOutput{ActivePageIndex: -1, OpenPagesURLs: []string{}}
		raw, _ := json.Marshal(extras)
		if err := json.Unmarshal(raw, &o.Browser); err != nil {
			return nil, fmt.Errorf("browse observation: extras of unexpected types: %v in %s", err, o.body)
		}
	case "download":
		// FileDownloadObservation(content, file_path).
		if err := allow("file_path"); err != nil {
			return nil, err
		}
		if _, ok := extras["file_path"]; !ok {
			return nil, fmt.Errorf("TypeError: FileDownloadObservation missing required argument 'file_path' in %s", data)
		}
		if err := str("file_path", &o.FilePath); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("observation %q is not one these tests expect: %s", o.Kind, data)
	}
	return o, nil
}

// truncateLikeHost is CmdOutputObservation._maybe_truncate: content longer
// than 30,000 characters keeps its first and last 15,000.
func truncateLikeHost(s string) string {
	const maxSize = 30000
	if utf8.RuneCountInString(s) <= maxSize {
		return s
	}
	runes := []rune(s)
	half := maxSize / 2
	return string(runes[:half]) + "\n[... Observation truncated due to length ...]\n" + string(runes[len(runes)-half:])
}

// addEnvVars is Runtime.add_env_vars.
func (r *runtime) addEnvVars(vars []envVar) {
	r.t.Helper()
	up := make([]envVar, len(vars))
	for i, e := range vars {
		up[i] = envVar{strings.ToUpper(e.key), e.value}
	}
	if slices.Contains(r.opts.plugins, "jupyter") {
		code := "import os\n"
		for _, e := range up {
			code += fmt.Sprintf("os.environ[\"%s\"] = %s\n", e.key, pyJSONString(e.value))
		}
		code += "\n"
		// The host does not look at the answer, but an HTTP error raises.
		if _, err := r.runIPython(code); err != nil {
			r.t.Fatalf("add_env_vars: run_ipython: %v", err)
		}
	}
	var cmd, bashrc strings.Builder
	for _, e := range up {
		v := pyJSONString(e.value)
		fmt.Fprintf(&cmd, "export %s=%s; ", e.key, v)
		fmt.Fprintf(&bashrc, "touch ~/.bashrc; grep -q \"^export %s=\" ~/.bashrc || echo \"export %s=%s\" >> ~/.bashrc; ", e.key, e.key, v)
	}
	if cmd.Len() == 0 {
		return
	}
	keys := make([]string, len(up))
	for i, e := range up {
		keys[i] = e.key
	}
	o := r.run(run(strings.TrimSpace(cmd.String())))
	if o.Kind != "run" || o.metadata.ExitCode != 0 {
		r.t.Fatalf("RuntimeError: Failed to add env vars %v to environment: %q; %v", keys, o.Content, o)
	}
	o = r.run(run(strings.TrimSpace(bashrc.String())))
	if o.Kind != "run" || o.metadata.ExitCode != 0 {
		r.t.Fatalf("RuntimeError: Failed to add env vars %v to .bashrc: %q; %v", keys, o.Content, o)
	}
}

// setupInitialEnv is Runtime.setup_initial_env, run after connecting.
func (r *runtime) setupInitialEnv() {
	r.t.Helper()
	r.addEnvVars(r.opts.sandboxEnv)
	if len(r.opts.startupEnv) > 0 {
		r.addEnvVars(r.opts.startupEnv)
	}
	// _setup_git_config only logs a failure.
	o, err := r.tryRun(run(`git config --global user.name "openhands" && git config --global user.email "openhands@all-hands.dev"`))
	switch {
	case err != nil:
		r.t.Logf("git config failed (the host only logs this): %v", err)
	case o.Kind != "run" || o.metadata.ExitCode != 0:
		r.t.Logf("git config failed (the host only logs this): %v", o)
	}
}

// pyJSONString is json.dumps(s): ASCII only, with Python's escapes.
func pyJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\f':
			b.WriteString(`\f`)
		case c < 0x20 || (c > 0x7e && c <= 0xffff && c != 0x7f):
			fmt.Fprintf(&b, `\u%04x`, c)
		case c > 0xffff:
			c -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(c>>10), 0xdc00+(c&0x3ff))
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// sleep is the suite's time.sleep.
func sleep(seconds float64) { time.Sleep(time.Duration(seconds * float64(time.Second))) }

// copyTo is the host's copy_to: POST /upload_file with the file in the
// multipart field "file" and the destination directory and
// recursive=true|false in the query. A directory goes recursively, as a
// zip of its files named relative to its parent (so the directory's own
// name comes first) under a temporary tmp*.zip name, removed afterwards.
// A missing source fails before any request, with FileNotFoundError.
func (r *runtime) copyTo(hostSrc, sandboxDest string, recursive bool) error {
	info, err := os.Stat(hostSrc)
	if err != nil {
		return fmt.Errorf("FileNotFoundError: Source file %s does not exist: %w", hostSrc, fs.ErrNotExist)
	}
	upload := hostSrc
	if recursive {
		zipPath, err := zipForUpload(hostSrc, r.t.TempDir())
		if err != nil {
			return err
		}
		defer os.Remove(zipPath)
		upload = zipPath
	} else if info.IsDir() {
		return fmt.Errorf("IsADirectoryError: [Errno 21] Is a directory: '%s'", hostSrc)
	}

	body, contentType, err := multipartFile(upload)
	if err != nil {
		return err
	}
	query := url.Values{"destination": {sandboxDest}, "recursive": {strconv.FormatBool(recursive)}}
	r.t.Logf("-> upload_file %s (%s)", upload, query.Encode())
	hc := &http.Client{Timeout: 300 * time.Second}
	resp, err := hc.Post(r.url+"/upload_file?"+query.Encode(), contentType, body)
	if err != nil {
		return fmt.Errorf("httpx error: %w", err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	r.t.Logf("<- upload_file HTTP %d %s", resp.StatusCode, clip(string(data), 300))
	if resp.StatusCode >= 400 {
		return fmt.Errorf("RequestHTTPError: HTTP %d; body %s", resp.StatusCode, data)
	}
	return nil
}

// copyFrom is the host's copy_from: GET /download_files?path=..., the body
// streamed into a temporary .zip whose path it returns. Like the host, it
// does not look at the status: whatever the server answers is the "zip".
func (r *runtime) copyFrom(path string) (string, error) {
	hc := &http.Client{Timeout: 30 * time.Second}
	resp, err := hc.Get(r.url + "/download_files?" + url.Values{"path": {path}}.Encode())
	if err != nil {
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			return "", errors.New("TimeoutError: Copy operation timed out")
		}
		return "", fmt.Errorf("httpx error: %w", err)
	}
	defer resp.Body.Close()
	r.t.Logf("<- download_files %s: HTTP %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	f, err := os.CreateTemp(r.t.TempDir(), "tmp*.zip")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			return "", errors.New("TimeoutError: Copy operation timed out")
		}
		return "", fmt.Errorf("httpx error: %w", err)
	}
	return f.Name(), f.Close()
}

// zipForUpload zips the regular files under dir (symbolic links followed,
// directories not stored, as Python's zipfile does from an os.walk), each
// named relative to dir's parent and stored uncompressed, into a new
// tmp*.zip in tmpDir.
func zipForUpload(dir, tmpDir string) (string, error) {
	f, err := os.CreateTemp(tmpDir, "tmp*.zip")
	if err != nil {
		return "", err
	}
	zw := zip.NewWriter(f)
	parent := filepath.Dir(dir)
	walkErr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := os.Stat(p)
		if err != nil || info.IsDir() {
			// os.walk lists a link to a directory among the
			// directories and does not follow it.
			return err
		}
		rel, err := filepath.Rel(parent, p)
		if err != nil {
			return err
		}
		h, err := zip.FileInfoHeader(info)
		if err != nil {
			return err
		}
		h.Name, h.Method = filepath.ToSlash(rel), zip.Store
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(w, src)
		return err
	})
	closeErr := errors.Join(zw.Close(), f.Close())
	if err := errors.Join(walkErr, closeErr); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("zip %s: %w", dir, err)
	}
	return f.Name(), nil
}

// pythonMimeType is what Python's mimetypes guesses from its built-in
// table for the extensions the tests upload.
func pythonMimeType(ext string) (string, bool) {
	switch strings.ToLower(ext) {
	case ".txt":
		return "text/plain", true
	case ".zip":
		return "application/zip", true
	}
	return "", false
}

// multipartFile is the form httpx builds from files={"file": <open file>}:
// the file's base name as filename and a content type guessed from it.
func multipartFile(path string) (io.Reader, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	name := filepath.Base(path)
	ctype := "application/octet-stream"
	if t, _, err := mime.ParseMediaType(mime.TypeByExtension(filepath.Ext(name))); err == nil {
		ctype = t
	} else if t, ok := pythonMimeType(filepath.Ext(name)); ok {
		// Go knows few types without the system's mime.types;
		// Python's mimetypes has these built in.
		ctype = t
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	quoted := strings.NewReplacer(`\`, `\\`, `"`, "%22").Replace(name)
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+quoted+`"`)
	h.Set("Content-Type", ctype)
	part, err := mw.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if _, err := part.Write(data); err != nil {
		return nil, "", err
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return &body, mw.FormDataContentType(), nil
}

// listFiles is the host's list_files(path): POST /list_files with
// {"path": path} ({} for the initial working directory, path ""), a
// ten-second timeout, and an answer that must be a JSON list.
func (r *runtime) listFiles(path string) []string {
	r.t.Helper()
	data := map[string]string{}
	if path != "" {
		data["path"] = path
	}
	body, err := json.Marshal(data)
	if err != nil {
		r.t.Fatal(err)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Post(r.url+"/list_files", "application/json", bytes.NewReader(body))
	if err != nil {
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			r.t.Fatalf("list_files %s: TimeoutError: List files operation timed out", path)
		}
		r.t.Fatalf("list_files %s: httpx error: %v", path, err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		r.t.Fatalf("list_files %s: read the answer: %v", path, err)
	}
	r.t.Logf("<- list_files %s: HTTP %d %s", path, resp.StatusCode, clip(string(raw), 300))
	if resp.StatusCode >= 400 {
		r.t.Fatalf("list_files %s: RequestHTTPError: HTTP %d; body %s", path, resp.StatusCode, raw)
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil || names == nil {
		r.t.Fatalf("list_files %s: AssertionError: the answer is not a list of names: %s", path, raw)
	}
	return names
}
