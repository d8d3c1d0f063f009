package shell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// Options configure a Session. The zero value runs bash from PATH as the
// server's own user, in the server's working directory, with its
// environment.
type Options struct {
	// Dir is the initial working directory.
	Dir string
	// Env is the shell's environment; nil means the server's.
	Env []string
	// Credential runs the shell as another user; nil means the server's.
	Credential *syscall.Credential
	// Bash is the bash executable (4.4 or later); default "bash" from PATH.
	Bash string
	// TempDir holds the per-session files; default os.TempDir().
	TempDir string
	// NoChangeTimeout ends the wait for a non-blocking command that has
	// printed nothing for this long; default 10s.
	NoChangeTimeout time.Duration
	// Rows and Cols are the terminal size; default 1000 by 1000, as wide as
	// OpenHands' terminal so programs do not cut lines to fit.
	Rows, Cols uint16
	// OutputLimit is how many bytes of each command's output are kept;
	// default 8 MiB. Older bytes are dropped.
	OutputLimit int
	// HistoryLines is how many lines of a command's output an observation
	// shows at most, the rest being summarised by a prefix; default 11,000,
	// the scroll-back plus screen of OpenHands' terminal.
	HistoryLines int
	// MaxOutputChars bounds the content of an observation that is not
	// hidden: longer content keeps its head and tail; default 30,000.
	MaxOutputChars int
	// Logger receives the session's diagnostics; default slog.Default().
	Logger *slog.Logger
}

func (o *Options) setDefaults() error {
	if o.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("working directory: %w", err)
		}
		o.Dir = wd
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Bash == "" {
		path, err := exec.LookPath("bash")
		if err != nil {
			return fmt.Errorf("find bash: %w", err)
		}
		o.Bash = path
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	if o.NoChangeTimeout <= 0 {
		o.NoChangeTimeout = 10 * time.Second
	}
	if o.Rows == 0 {
		o.Rows = 1000
	}
	if o.Cols == 0 {
		o.Cols = 1000
	}
	if o.OutputLimit <= 0 {
		o.OutputLimit = 8 << 20
	}
	if o.HistoryLines <= 0 {
		o.HistoryLines = 11000
	}
	if o.MaxOutputChars <= 0 {
		o.MaxOutputChars = 30000
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// Request is one "run" action for a session.
type Request struct {
	// Command is the command, the input for the running command (IsInput),
	// a control key such as "C-c", or "" to fetch more output.
	Command string
	// IsInput sends Command to the running command instead of the shell.
	IsInput bool
	// Blocking disables the no-change timeout.
	Blocking bool
	// Timeout is the hard timeout; 0 means none.
	Timeout time.Duration
	// Hidden keeps the output whole (no truncation).
	Hidden bool
}

// Result is the observation of one Request.
type Result struct {
	// Content is the command's new output, cleaned and possibly truncated.
	Content string
	// Command is the request's command, trimmed.
	Command string
	// Finished reports that the command completed, so Metadata is known.
	Finished bool
	Metadata Metadata
	// Prefix and Suffix frame Content for the agent.
	Prefix, Suffix string
	Hidden         bool
}

// ErrClosed is returned by a closed Session.
var ErrClosed = errors.New("shell session is closed")

// ErrNoPTY is returned when a new shell cannot start because the system has
// no pseudo-terminal left; ending another session frees one.
var ErrNoPTY = errors.New("no pseudo-terminal available")

// Session is a persistent interactive bash on a terminal. Commands run one
// at a time; state (directory, variables, functions, aliases) persists
// between them. If bash dies, the next request starts a new one in the last
// known directory and says so.
type Session struct {
	opts Options
	log  *slog.Logger
	sem  chan struct{} // one request at a time

	mu      sync.Mutex
	proc    *process
	cwd     string
	closed  bool
	note    string // to prefix the next observation (a restart)
	nextID  int64
	last    *Command
	view    view // what the agent has seen of last
	initial Metadata
	history []*Command // recent commands, oldest first
	started time.Time
}

// view is the agent's position in the output of the last command.
type view struct {
	off      int64  // finalized bytes already shown
	live     string // the changeable tail as it was shown
	observed int    // observations made of the command
	reported bool   // its completion has been shown
}

// Start starts a session and waits until bash is ready for commands.
func Start(ctx context.Context, opts Options) (*Session, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	s := &Session{opts: opts, log: opts.Logger, sem: make(chan struct{}, 1), cwd: opts.Dir, started: time.Now()}
	p, err := startProcess(ctx, &s.opts, s.cwd, s.log)
	if err != nil {
		return nil, err
	}
	s.proc = p
	p.mu.Lock()
	s.initial = p.prompt
	p.mu.Unlock()
	if s.initial.WorkingDir != "" {
		s.cwd = s.initial.WorkingDir
	}
	return s, nil
}

// Cwd returns the shell's working directory as of its last prompt.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// PID returns the pid of the current bash, or 0 when there is none.
func (s *Session) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.pid
}

// Close ends bash and every process of its terminal session, waiting up to
// grace before killing them.
func (s *Session) Close(grace time.Duration) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if p != nil {
		p.close(grace)
	}
}

func (s *Session) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Session) release() { <-s.sem }

// Run executes one request with the semantics of OpenHands' bash session:
// a new command runs until it completes, prints nothing for the no-change
// timeout (unless blocking) or reaches the hard timeout; a command that did
// not complete keeps running, and later requests fetch its output ("") or
// send it input. A MultipleCommandsError rejects several commands at once.
func (s *Session) Run(ctx context.Context, req Request) (Result, error) {
	if err := s.acquire(ctx); err != nil {
		return Result{}, err
	}
	defer s.release()
	p, err := s.ensureProcess(ctx)
	if err != nil {
		return Result{}, err
	}
	res, err := s.run(ctx, p, req)
	if err != nil {
		return res, err
	}
	s.mu.Lock()
	res.Prefix = s.note + res.Prefix
	s.note = ""
	s.mu.Unlock()
	return res, nil
}

// ensureProcess returns the session's bash, replacing it first if it died.
// The request holds on to the returned process: Close may clear s.proc at
// any time.
func (s *Session) ensureProcess(ctx context.Context) (*process, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.proc.alive() && !s.proc.reaped() {
		return s.proc, nil
	}
	// A bash that was just killed is reported dead only once its last
	// output is drained; wait for that rather than refuse this action
	// because the command it was running seems to run still.
	select {
	case <-s.proc.exited:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	old := s.proc
	old.close(0) // end what it left behind before a pid can be reused
	dir := s.cwd
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = s.opts.Dir
	}
	p, err := startProcess(ctx, &s.opts, dir, s.log)
	if err != nil {
		return nil, fmt.Errorf("restart shell: %w", err)
	}
	s.log.Warn("shell exited; started a new one", "status", old.exitStatus, "dir", dir)
	s.proc = p
	s.cwd = dir
	s.note += prefixRestarted(old.exitStatus, dir)
	return p, nil
}

func (s *Session) run(ctx context.Context, p *process, req Request) (Result, error) {
	cmd := strings.TrimSpace(req.Command)
	last := s.last
	running := last != nil && !isClosed(last.done)
	unreported := last != nil && !running && !s.view.reported && s.view.observed > 0

	if !running && !unreported {
		if cmd == "" {
			return Result{Content: msgNoCommandForLogs, Metadata: unknownMetadata()}, nil
		}
		if req.IsInput {
			return Result{Content: msgNoCommandForInput, Metadata: unknownMetadata()}, nil
		}
	}
	if parts := SplitCommands(cmd); len(parts) > 1 {
		return Result{}, &MultipleCommandsError{Commands: parts}
	}

	switch {
	case running && !req.IsInput && cmd != "":
		return s.refuse(p, last, cmd, req), nil
	case unreported && (req.IsInput || cmd == ""):
		// It finished while nobody watched: report that, send nothing.
		return s.completed(p, last, req, cmd), nil
	case running:
		if cmd != "" {
			if err := sendInput(p, cmd); err != nil {
				return Result{}, err
			}
		}
		return s.wait(ctx, p, last, req, cmd)
	}

	// A new command. What the previous one printed after it was last
	// shown goes first, so nothing is lost.
	var carried string
	if unreported {
		carried = s.completed(p, last, req, "").Content
	}
	c := s.newCommand(p, cmd)
	c.heredocs, c.incomplete = examineInput(cmd)
	var err error
	if key, ok := specialKey(cmd); ok {
		err = p.sendKeyAtPrompt(ctx, c, key)
	} else {
		err = p.run(c)
	}
	if err != nil {
		s.abandon(p, c, last)
		return Result{}, err
	}
	res, err := s.wait(ctx, p, c, req, cmd)
	if err == nil && carried != "" {
		res.Content = strings.TrimSpace(carried + "\n" + res.Content)
	}
	return res, err
}

func (s *Session) newCommand(p *process, text string) *Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	c := &Command{ID: s.nextID, Text: text, Started: time.Now(), out: newRing(s.opts.OutputLimit),
		done: make(chan struct{}), proc: p}
	s.last = c
	s.view = view{}
	s.remember(c)
	return c
}

// abandon forgets c, a command that never reached bash (the shell was busy
// with what a person typed, say): prev is the last command again. Left in
// place, c would count as running forever and every later command would
// be refused.
func (s *Session) abandon(p *process, c *Command, prev *Command) {
	p.mu.Lock()
	if !isClosed(c.done) {
		c.meta = unknownMetadata()
		c.finished = time.Now()
		close(c.done)
		c.notify()
	}
	p.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == c {
		s.last = prev
	}
	s.history = slices.DeleteFunc(s.history, func(h *Command) bool { return h == c })
}

// sendInput types text and Enter into the running command, or sends a
// control key.
func sendInput(p *process, cmd string) error {
	if key, ok := specialKey(cmd); ok {
		return p.write([]byte{key})
	}
	return p.write([]byte(cmd + "\n"))
}

// ctrlC is the byte Ctrl-C sends.
const ctrlC = 0x03

// interruptAgain and interruptEcho: a Ctrl-C can be lost. When it reaches
// the terminal just as one command of a loop has ended and bash has not yet
// taken the terminal back, it goes to the ended command's empty process
// group and the loop runs on, as it would for a person, who would press
// Ctrl-C again. So does the server, once: if interruptAgain after the key
// the command still runs and has printed since (beyond the echo of the key,
// within interruptEcho), it sends Ctrl-C a second time.
const (
	interruptAgain = 1500 * time.Millisecond
	interruptEcho  = 200 * time.Millisecond
)

// keyQuiet is the shortest no-change wait after a control key. A key
// usually ends the command, but bash may print its prompt only once the
// child it waits for is done: Ctrl-C that lands while a loop is between
// two commands reaches bash, not the child, and the loop stops after the
// child. With a short NO_CHANGE_TIMEOUT the agent would be told the
// command still runs and be refused its next one.
const keyQuiet = 3 * time.Second

// wait watches c until it completes or a timeout ends the wait.
func (s *Session) wait(ctx context.Context, p *process, c *Command, req Request, cmd string) (Result, error) {
	start := time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	quiet := s.opts.NoChangeTimeout
	key, isKey := specialKey(cmd)
	if isKey {
		quiet = max(quiet, keyQuiet)
	}
	// Ctrl-C again, once, if the command went on printing as if it never
	// came (see interruptAgain).
	// Only for a key sent into a running command: c is then that command,
	// not the key itself.
	again := time.Time{}
	if isKey && key == ctrlC && c.Text != cmd {
		again = start.Add(interruptAgain)
	}
	for {
		now := time.Now()
		next := now.Add(time.Hour)
		if !again.IsZero() {
			if !now.Before(again) {
				if p.lastOutput.Load() > start.Add(interruptEcho).UnixNano() {
					_ = p.write([]byte{ctrlC})
				}
				again = time.Time{}
			} else {
				next = again
			}
		}
		if !req.Blocking {
			quietSince := max(start.UnixNano(), p.lastOutput.Load())
			soft := time.Unix(0, quietSince).Add(quiet)
			if !now.Before(soft) {
				return s.timedOut(p, c, req, cmd, suffixNoChange(formatSeconds(s.opts.NoChangeTimeout.Seconds()))), nil
			}
			next = soft
		}
		if req.Timeout > 0 {
			hard := start.Add(req.Timeout)
			if !now.Before(hard) {
				return s.timedOut(p, c, req, cmd, suffixHardTimeout(pyfmt.Float(req.Timeout.Seconds()))), nil
			}
			if hard.Before(next) {
				next = hard
			}
		}
		timer.Reset(next.Sub(now))
		select {
		case <-c.done:
			return s.completed(p, c, req, cmd), nil
		case <-timer.C:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
}

// completed builds the observation of a finished command.
func (s *Session) completed(p *process, c *Command, req Request, cmd string) Result {
	p.mu.Lock()
	meta, died, special := c.meta, c.died, c.special
	p.mu.Unlock()

	text, truncated, lines := s.window(p, c, req.Hidden)
	s.mu.Lock()
	defer s.mu.Unlock()
	res := Result{Command: cmd, Finished: true, Metadata: meta, Hidden: req.Hidden}
	if s.view.observed == 0 && truncated {
		res.Prefix = prefixTruncated(lines)
	}
	if meta.WorkingDir != "" {
		s.cwd = meta.WorkingDir
	}
	switch {
	case died:
		res.Suffix = suffixShellExited(meta.ExitCode, s.cwd)
	case special:
		res.Suffix = suffixCompletedKey(meta.ExitCode, c.Text)
	case isSpecial(cmd):
		res.Suffix = suffixCompletedKey(meta.ExitCode, cmd)
	default:
		res.Suffix = suffixCompleted(meta.ExitCode)
	}
	res.Content = s.finish(text, req, cmd)
	s.view.observed++
	s.view.reported = true
	return res
}

// timedOut builds the observation of a command still running.
func (s *Session) timedOut(p *process, c *Command, req Request, cmd, suffix string) Result {
	text, truncated, lines := s.window(p, c, req.Hidden)
	s.mu.Lock()
	defer s.mu.Unlock()
	res := Result{Command: cmd, Metadata: unknownMetadata(), Suffix: suffix, Hidden: req.Hidden}
	switch {
	case s.view.observed > 0:
		res.Prefix = prefixContinued
	case truncated:
		res.Prefix = prefixTruncated(lines)
	}
	res.Content = s.finish(text, req, cmd)
	s.view.observed++
	return res
}

// refuse answers a new command sent while another one runs: it is not run;
// the running command's new output is shown instead.
func (s *Session) refuse(p *process, c *Command, cmd string, req Request) Result {
	text, _, _ := s.window(p, c, req.Hidden)
	s.mu.Lock()
	defer s.mu.Unlock()
	res := Result{Command: cmd, Metadata: unknownMetadata(), Suffix: suffixNotExecuted(cmd), Hidden: req.Hidden}
	if s.view.observed > 0 {
		res.Prefix = prefixContinued
	}
	res.Content = s.finish(text, Request{Hidden: req.Hidden}, "")
	s.view.observed++
	return res
}

func unknownMetadata() Metadata { return Metadata{ExitCode: -1, PID: -1} }

// window returns the output of c the agent has not seen yet and moves the
// agent's position to the end. Text beyond HistoryLines lines, or dropped
// from the output buffer, is cut from the front; truncated reports that,
// and lines how many lines are left.
func (s *Session) window(p *process, c *Command, hidden bool) (text string, truncated bool, lines int) {
	p.mu.Lock()
	s.mu.Lock()
	v := s.view
	s.mu.Unlock()
	from := v.off
	skipped := false
	if !hidden {
		// Only the last HistoryLines lines can be shown: copy just those,
		// not the whole output buffer. What was shown of the changeable
		// text (v.live) is at the front and removed by afterShown, so keep
		// that many lines more; when lines are skipped even so, the rest
		// is cut to HistoryLines below, as it would be from the whole.
		if ls := c.out.lineStart(s.opts.HistoryLines + strings.Count(v.live, "\n") + 2); ls > from {
			from, skipped = ls, true
		}
	}
	fin, lost := c.out.ReadFrom(from, -1)
	live := p.liveText(c)
	end := c.out.total
	p.mu.Unlock()

	cur := string(fin) + string(live)
	text = cur
	if !skipped {
		text = afterShown(cur, v.live)
	}
	s.mu.Lock()
	s.view.off, s.view.live = end, string(live)
	s.mu.Unlock()

	truncated = lost > 0 || skipped
	if !hidden {
		text, truncated = lastLines(text, s.opts.HistoryLines, truncated)
	}
	if truncated {
		lines = countLines(text)
	}
	return text, truncated, lines
}

// lastLines keeps the last n lines of text (a final newline does not start
// a line), reporting whether it cut anything.
func lastLines(text string, n int, truncated bool) (string, bool) {
	body := strings.TrimSuffix(text, "\n")
	if strings.Count(body, "\n") < n {
		return text, truncated
	}
	cut := len(body)
	for range n {
		cut = strings.LastIndexByte(body[:cut], '\n')
	}
	return text[cut+1:], true
}

// afterShown returns the part of cur after what was shown. cur starts with
// the text that was still changeable when shown; where that text changed
// (a progress bar redrawn), the changed line is shown again whole.
func afterShown(cur, shown string) string {
	if strings.HasPrefix(cur, shown) {
		return cur[len(shown):]
	}
	n := 0
	for n < len(cur) && n < len(shown) && cur[n] == shown[n] {
		n++
	}
	return cur[strings.LastIndexByte(cur[:n], '\n')+1:]
}

// countLines counts lines as Python's splitlines does for '\n' text.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1
}

// finish turns window text into observation content: lines right-trimmed
// (as a terminal shows them), the whole trimmed, the echo of typed input
// removed, and truncated unless hidden.
func (s *Session) finish(text string, req Request, echo string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	out := strings.TrimLeftFunc(strings.Join(lines, "\n"), unicode.IsSpace)
	if req.IsInput && echo != "" {
		out = strings.TrimLeftFunc(strings.TrimPrefix(out, strings.TrimLeftFunc(echo, unicode.IsSpace)), unicode.IsSpace)
	}
	out = strings.TrimRightFunc(out, unicode.IsSpace)
	if !req.Hidden {
		out = truncateMiddle(out, s.opts.MaxOutputChars)
	}
	return out
}

// truncateMiddle keeps the first and last max/2 characters of s.
func truncateMiddle(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	half := max / 2
	head := s
	for i := range s {
		if half == 0 {
			head = s[:i]
			break
		}
		half--
	}
	tail := s
	for n, i := max/2, len(s); n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
		tail = s[i:]
	}
	return head + truncationMarker + tail
}

// specialKey reports whether cmd names a control key ("C-c", "C-d", ...)
// and returns the byte a terminal sends for it.
func specialKey(cmd string) (byte, bool) {
	if !isSpecial(cmd) {
		return 0, false
	}
	r, _ := utf8.DecodeLastRuneInString(cmd)
	switch {
	case r >= 'a' && r <= 'z':
		return byte(r) & 0x1f, true
	case r >= '@' && r <= '_':
		return byte(r) & 0x1f, true
	case r == '?':
		return 0x7f, true
	case r == ' ':
		return 0, true
	}
	return 0, false
}

// isSpecial is the host's rule for a key name: "C-" and one character.
func isSpecial(cmd string) bool {
	return strings.HasPrefix(cmd, "C-") && utf8.RuneCountInString(cmd) == 3
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
