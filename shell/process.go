package shell

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// process is one bash on one pseudo-terminal. A Session owns a process at a
// time and replaces it when it dies.
type process struct {
	log     *slog.Logger
	cmd     *exec.Cmd
	pty     *os.File
	pid     int
	nonce   string
	dir     string // session files: rc and command
	cmdFile string
	uid     int // the shell's user when it is another: -1 when it is the server's
	gid     int // its group, which may read the session directory; -1 likewise
	// userUID and userGIDs are the shell's user, for resolving `which`.
	userUID  int
	userGIDs []int

	cmdOut *cmdFile      // cmdFile, open for writing
	budget *OutputBudget // told of each finished command's output

	exited     chan struct{} // closed once bash has exited and been reaped
	exitStatus int           // valid after exited: exit code, or 128+signal
	readerDone chan struct{}

	lastOutput atomic.Int64 // unix nanos of the last byte read
	settleT    *time.Timer  // finalizes quiet lines after settleQuiet

	// mu guards the fields below and the mutable state and output of
	// every Command run in this process. The session's mu is never taken
	// while it is held.
	mu      sync.Mutex
	scr     *screen
	phase   phase
	cur     *Command // the command being run, from send until done
	idle    *ring    // text printed while bash waits at its prompt
	fields  []string // metadata fields collected after the end marker
	field   []byte
	ready   chan struct{} // closed at the first prompt
	prompt  Metadata      // from the most recent prompt
	started bool          // the start marker of cur was seen
	raw     map[*RawSubscriber]struct{}
	// promptDone is closed when bash has printed its whole prompt and is
	// about to read; replaced at each prompt.
	promptDone chan struct{}
	// prompts are the prompts seen whose completion waits for `which
	// python`, resolved outside mu (see onPrompt), oldest first.
	prompts []promptSeen
	// sawPrompt is set at the first prompt seen.
	sawPrompt bool
	// lookPython resolves `which python` for a prompt: which, unless a
	// test replaces it.
	lookPython func(path, pwd string) string
}

// promptSeen is a prompt whose metadata is parsed but whose command is not
// yet reported done.
type promptSeen struct {
	meta  Metadata
	path  string   // the PATH it reported
	first bool     // the shell's first prompt: it is ready
	cur   *Command // the command it ends, if any
}

// settleQuiet is how long a line above the cursor must stay unchanged to be
// final. Progress displays redraw faster, so they stay live; lines of a slow
// command reach output readers within this delay.
const settleQuiet = 200 * time.Millisecond

type phase int

const (
	phaseStarting phase = iota // before the first prompt
	phaseIdle                  // bash waits at its prompt
	phaseRunning               // a command runs
	phaseMeta                  // the prompt prints its metadata
	phasePrompt                // the visible prompt, for a human attached
)

// startProcess starts bash in dir and waits for its first prompt.
func startProcess(ctx context.Context, opts *Options, dir string, log *slog.Logger, cg *sessionCgroup) (*process, error) {
	p, err := newProcess(opts, log)
	if err != nil {
		return nil, err
	}
	if err := p.spawn(opts, dir, cg); err != nil {
		return nil, err
	}
	p.lastOutput.Store(time.Now().UnixNano())
	p.settleT = time.AfterFunc(time.Hour, p.settle)
	go p.readLoop()
	go p.reap()

	deadline := time.NewTimer(opts.StartTimeout)
	defer deadline.Stop()
	select {
	case <-p.ready:
		// Later: it reads the whole of /tmp, and would take CPU from
		// the first shell's start and the first commands.
		sweepOnce.Do(func() { time.AfterFunc(sweepDelay, func() { sweepStaleDirs(opts.TempDir) }) })
		return p, nil
	case <-p.exited:
		p.close(noGrace())
		return nil, fmt.Errorf("bash exited during start-up with status %d", p.exitStatus)
	case <-deadline.C:
		// Ended before it is described, so that what it printed last
		// is in.
		p.close(noGrace())
		err := fmt.Errorf("%w: bash gave no prompt within %s. Its start-up files (/etc/bash.bashrc, ~/.bashrc and what they source) "+
			"are the likely cause: something in them waits (a lock, the network, input). It was ended; the next action starts a new one",
			ErrStartTimeout, opts.StartTimeout)
		if out := p.startupOutput(); out != "" {
			err = fmt.Errorf("%w. It printed: %s", err, out)
		}
		return nil, err
	case <-ctx.Done():
		p.close(noGrace())
		return nil, fmt.Errorf("start bash: %w", ctx.Err())
	}
}

// startupOutput returns the end of what bash printed before its first
// prompt, for an error that says why it never came.
func (p *process) startupOutput() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scr.flush()
	data, _ := p.idle.ReadFrom(p.idle.total-300, -1)
	return strings.TrimSpace(strings.ToValidUTF8(string(data), ""))
}

// newProcess prepares a process for opts; it holds nothing to release yet.
func newProcess(opts *Options, log *slog.Logger) (*process, error) {
	nonceBytes := make([]byte, 8)
	if _, err := rand.Read(nonceBytes); err != nil {
		return nil, fmt.Errorf("session nonce: %w", err)
	}
	p := &process{
		log:        log,
		nonce:      hex.EncodeToString(nonceBytes),
		exited:     make(chan struct{}),
		readerDone: make(chan struct{}),
		ready:      make(chan struct{}),
		promptDone: make(chan struct{}),
		idle:       newRing(64 << 10),
		uid:        -1,
		gid:        -1,
	}
	p.userUID, p.userGIDs = os.Getuid(), nil
	if gs, err := os.Getgroups(); err == nil {
		p.userGIDs = append(gs, os.Getgid())
	}
	if c := opts.Credential; c != nil {
		p.uid, p.gid = int(c.Uid), int(c.Gid)
		p.userUID, p.userGIDs = int(c.Uid), []int{int(c.Gid)}
		for _, g := range c.Groups {
			p.userGIDs = append(p.userGIDs, int(g))
		}
	}
	p.lookPython = func(path, pwd string) string {
		return which("python", path, pwd, p.userUID, p.userGIDs)
	}
	p.scr = newScreen(p.sink, p.onOSC)
	return p, nil
}

// spawn makes the session directory and the terminal, then starts bash on
// the terminal. When it fails, it leaves nothing behind.
func (p *process) spawn(opts *Options, dir string, cg *sessionCgroup) (err error) {
	sessDir, err := os.MkdirTemp(opts.TempDir, sessDirPrefix())
	if err != nil {
		return fmt.Errorf("session directory: %w", err)
	}
	var master, slave *os.File
	defer func() {
		// bash has its own copy of the terminal's slave side; the server
		// keeps only the master, so it reads EIO once bash and its
		// children are gone.
		if slave != nil {
			slave.Close()
		}
		if err != nil {
			if master != nil {
				master.Close()
			}
			os.RemoveAll(sessDir)
		}
	}()
	p.dir = sessDir
	p.cmdFile = filepath.Join(sessDir, "command")
	p.cmdOut = &cmdFile{path: p.cmdFile, dir: sessDir, gid: p.gid, nonce: p.nonce}
	p.budget = opts.Budget
	// The directory stays the server's (see cmdFile); the shell's user
	// reads it through its group.
	if err := p.cmdOut.ensureDir(); err != nil {
		return err
	}
	rc := filepath.Join(sessDir, "rc")
	if err := os.WriteFile(rc, []byte(rcScript(p.nonce, p.cmdFile, dir)), 0o644); err != nil {
		return fmt.Errorf("write rc file: %w", err)
	}

	if master, slave, err = openPTY(); err != nil {
		return err
	}
	if err := setWinsize(master, opts.Rows, opts.Cols); err != nil {
		return fmt.Errorf("set terminal size: %w", err)
	}
	if err := resetTermios(master); err != nil {
		return fmt.Errorf("set terminal mode: %w", err)
	}

	c, err := startIn(cg, p.log, func() *exec.Cmd {
		c := exec.Command(opts.Bash, "--noediting", "--noprofile", "--rcfile", rc, "-i")
		c.Dir = dir
		c.Env = opts.Env
		c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Credential: opts.Credential}
		return c
	})
	if err != nil {
		who := "the server's user"
		if opts.Credential != nil {
			who = fmt.Sprintf("uid %d", opts.Credential.Uid)
		}
		return fmt.Errorf("start %s as %s in %s: %w", opts.Bash, who, dir, err)
	}
	p.pty, p.cmd, p.pid = master, c, c.Process.Pid
	return nil
}

// reap waits for bash to exit, then ends the command it was running.
func (p *process) reap() {
	err := p.cmd.Wait()
	p.exitStatus = exitStatus(p.cmd.ProcessState, err)
	// What bash printed last may still be in the terminal: let the
	// reader drain it before the command is finished, unless a
	// background child keeps the terminal open.
	select {
	case <-p.readerDone:
	case <-time.After(drainOnExit):
	}
	close(p.exited)
	p.mu.Lock()
	p.finishOnDeath()
	p.mu.Unlock()
}

func exitStatus(ps *os.ProcessState, err error) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// readLoop feeds terminal output to the screen until the pty is closed.
func (p *process) readLoop() {
	defer close(p.readerDone)
	buf := make([]byte, 64<<10)
	for {
		n, err := p.pty.Read(buf)
		if n > 0 {
			now := time.Now()
			p.lastOutput.Store(now.UnixNano())
			p.mu.Lock()
			p.scr.WriteAt(buf[:n], now)
			if p.cur != nil {
				p.cur.notify()
			}
			p.fanOutRaw(buf[:n])
			p.mu.Unlock()
			p.completePrompts()
			p.settleT.Reset(settleQuiet)
		}
		if err != nil {
			// EIO: every holder of the slave is gone. Closed: we closed it.
			if !errors.Is(err, os.ErrClosed) && !errors.Is(err, syscall.EIO) && !errors.Is(err, io.EOF) {
				p.log.Warn("read from terminal", "error", err)
			}
			return
		}
	}
}

// settle finalizes lines that stopped changing, once output went quiet.
func (p *process) settle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scr.settle(time.Now(), settleQuiet)
	if p.cur != nil {
		p.cur.notify()
	}
}

// sink receives text the screen has finalized. Called with mu held.
func (p *process) sink(b []byte) {
	switch p.phase {
	case phaseRunning:
		if p.cur != nil {
			p.cur.out.Write(b)
		}
	case phaseMeta:
		p.field = append(p.field, b...)
	case phasePrompt:
		// The prompt is for people attached to the terminal.
	default:
		p.idle.Write(b)
	}
}

// onOSC handles our markers; other OSC sequences (window titles, ...) are
// dropped. Called with mu held.
func (p *process) onOSC(cmd int, data []byte) {
	if cmd != oscMarker {
		return
	}
	rest, ok := bytes.CutPrefix(data, []byte(strconv.Itoa(oscMarker)+";"+p.nonce+";"))
	if !ok || len(rest) != 1 {
		return
	}
	switch rest[0] {
	case markStart:
		p.scr.flush()
		if p.phase != phaseIdle {
			return
		}
		if p.cur == nil {
			// Someone attached to the terminal typed a command. It is
			// theirs: keep it out of the agent's output.
			p.idle = newRing(p.idle.limit)
			p.phase = phaseRunning
			return
		}
		// What the idle prompt collected: the echo of the trigger line,
		// and output of background jobs, which belongs to the agent.
		if bg := idleText(p.idle); bg != "" {
			p.cur.out.Write([]byte(bg))
		}
		p.idle = newRing(p.idle.limit)
		p.started = true
		p.phase = phaseRunning
	case markEnd:
		p.scr.flush()
		if p.cur != nil && p.phase == phaseIdle {
			// No start marker: a control key at the prompt. What it
			// echoed is its output.
			p.cur.out.Write([]byte(strings.TrimSpace(idleText(p.idle))))
			p.idle = newRing(p.idle.limit)
		}
		p.phase = phaseMeta
		p.fields, p.field = p.fields[:0], p.field[:0]
	case markPrompt:
		p.scr.flush()
		if p.phase == phaseIdle {
			p.phase = phasePrompt
		}
	case markPromptEnd:
		p.scr.flush()
		if p.phase == phasePrompt {
			p.phase = phaseIdle
			if !isClosed(p.promptDone) {
				close(p.promptDone)
			}
		}
	case markStale:
		// bash found no command of ours in the command file and ran
		// nothing: mend the file before the next command.
		p.cmdOut.stale.Store(true)
		p.log.Warn("the shell could not read its command file; the command was not run", "file", p.cmdFile)
	case markField, markDone:
		if p.phase != phaseMeta {
			return
		}
		p.scr.flush()
		p.fields = append(p.fields, string(p.field))
		p.field = p.field[:0]
		if rest[0] == markDone {
			p.onPrompt()
		}
	}
}

// idleText returns what was printed at the prompt, minus the echo of the
// trigger line.
func idleText(r *ring) string {
	data, _ := r.ReadFrom(0, -1)
	var keep []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == triggerLine {
			continue
		}
		keep = append(keep, line)
	}
	s := strings.Join(keep, "\n")
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return s
}

// onPrompt runs when bash has printed its prompt and metadata: the running
// command, if any, is done. Called with mu held. Its completion waits for
// `which python`, which stats every PATH entry: a hung mount there would
// stall every reader of the terminal if it ran under mu, so the reader
// finishes it in completePrompts once mu is released.
func (p *process) onPrompt() {
	m := parseMetadata(p.fields)
	p.phase = phaseIdle
	if isClosed(p.promptDone) {
		p.promptDone = make(chan struct{})
	}
	p.prompts = append(p.prompts, promptSeen{meta: m, path: p.fields[min(fieldPath, len(p.fields)-1)], first: !p.sawPrompt, cur: p.cur})
	p.sawPrompt = true
}

// completePrompts resolves `which python` for the prompts onPrompt saw,
// without mu, then reports them: the first one makes the shell ready, a
// later one finishes the command it ends. Called by the reader only, so
// prompts are completed in order.
func (p *process) completePrompts() {
	p.mu.Lock()
	seen, look := p.prompts, p.lookPython
	p.prompts = nil
	p.mu.Unlock()
	for _, ps := range seen {
		ps.meta.PyInterpreterPath = look(ps.path, ps.meta.WorkingDir)
		p.mu.Lock()
		p.completePrompt(ps)
		p.mu.Unlock()
	}
}

// completePrompt reports one prompt. Called with mu held.
func (p *process) completePrompt(ps promptSeen) {
	m := ps.meta
	p.prompt = m
	if ps.first {
		close(p.ready)
		return
	}
	// The shell may have died meanwhile (finishOnDeath reported the
	// command) or the command may have been replaced.
	if c := p.cur; c != nil && c == ps.cur {
		c.meta = m
		if c.incomplete && m.ExitCode != 2 && endedAtEOF(c.out) {
			c.meta.ExitCode = 2
		}
		c.finished = time.Now()
		p.cur = nil
		p.started = false
		close(c.done)
		c.notify()
		p.budget.add(c, c.out.size)
	}
}

// endedAtEOF reports whether bash's end-of-input syntax error ends the
// output.
func endedAtEOF(out *ring) bool {
	tail, _ := out.ReadFrom(out.total-512, -1)
	t := strings.TrimSpace(string(tail))
	i := strings.LastIndexByte(t, '\n')
	last := t[i+1:]
	return strings.Contains(last, "unexpected EOF while looking for matching") ||
		strings.Contains(last, "syntax error: unexpected end of file")
}

func parseMetadata(f []string) Metadata {
	get := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	atoi := func(s string) int {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return -1
		}
		return v
	}
	return Metadata{
		ExitCode:   atoi(get(fieldExitCode)),
		PID:        atoi(get(fieldPID)),
		Username:   get(fieldUser),
		Hostname:   get(fieldHost),
		WorkingDir: get(fieldPWD),
	}
}

// drainOnExit bounds the wait for the terminal's last output once bash
// has exited.
const drainOnExit = 200 * time.Millisecond

// finishOnDeath ends the running command when bash has exited. Called with
// mu held.
func (p *process) finishOnDeath() {
	if c := p.cur; c != nil {
		p.scr.flush()
		if !p.started {
			// Whatever was printed went to the idle buffer.
			p.cur.out.Write([]byte(idleText(p.idle)))
		}
		c.died = true
		c.meta = p.prompt
		c.meta.ExitCode = p.exitStatus
		c.finished = time.Now()
		p.cur = nil
		close(c.done)
		c.notify()
		p.budget.add(c, c.out.size)
	}
	for sub := range p.raw {
		sub.close()
	}
	p.raw = nil
}

// alive reports whether bash is still running.
func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// reaped reports whether bash is gone from the system. That happens up to
// drainOnExit before exited is closed, while the terminal's last output is
// read.
func (p *process) reaped() bool {
	return errors.Is(syscall.Kill(p.pid, 0), syscall.ESRCH)
}

// run starts c: the command text goes to the command file, then the trigger
// line is typed. The caller has checked that nothing is running.
func (p *process) run(c *Command) error {
	if err := p.writeCommandFile(commandFile(c)); err != nil {
		return err
	}
	p.mu.Lock()
	if p.cur != nil || (p.phase != phaseIdle && p.phase != phasePrompt) {
		p.mu.Unlock()
		return errors.New("shell is busy")
	}
	p.cur = c
	p.started = false
	p.mu.Unlock()
	// Typed input waits in the terminal until bash reads it, so the
	// trigger may go before the prompt is fully printed.
	if err := resetTermios(p.pty); err != nil {
		p.log.Warn("reset terminal mode", "error", err)
	}
	return p.write([]byte(triggerLine + "\n"))
}

// sendKeyAtPrompt sends a control key to bash itself, tracked as c. A key
// such as Ctrl-C becomes a signal at once, so it waits until bash has
// printed its prompt and reads: a signal while it still runs the prompt
// would be swallowed without a new prompt.
func (p *process) sendKeyAtPrompt(ctx context.Context, c *Command, key byte) error {
	p.mu.Lock()
	ready := p.promptDone
	p.mu.Unlock()
	select {
	case <-ready:
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	p.mu.Lock()
	if p.cur != nil || p.phase != phaseIdle {
		p.mu.Unlock()
		return errors.New("shell is busy")
	}
	c.special = true
	p.cur = c
	p.started = false
	p.mu.Unlock()
	if err := p.write([]byte{key}); err != nil {
		return err
	}
	if key == ctrlC {
		go p.repeatInterrupt(c)
	}
	return nil
}

// repeatInterrupt makes sure a Ctrl-C at the prompt gets its new prompt.
// Bash can swallow a SIGINT that arrives while it reaps a job that just
// died (a person would press Ctrl-C again); so if no prompt follows, it
// signals bash directly a few times. No extra "^C" is echoed, and a
// surplus prompt, with no command attached, changes nothing.
func (p *process) repeatInterrupt(c *Command) {
	for range 3 {
		select {
		case <-c.done:
			return
		case <-p.exited:
			return
		case <-time.After(500 * time.Millisecond):
			_ = syscall.Kill(p.pid, syscall.SIGINT)
		}
	}
}

// writeCommandFile stores the command bash will read.
func (p *process) writeCommandFile(text string) error {
	return p.cmdOut.write(text)
}

// write sends bytes to the terminal's input. A program that stops reading
// cannot block the caller forever.
func (p *process) write(b []byte) error {
	_ = p.pty.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := p.pty.Write(b); err != nil {
		return fmt.Errorf("write to terminal: %w", err)
	}
	return nil
}

// liveText returns the lines of the running command's output that may
// still change. Called with mu held.
func (p *process) liveText(c *Command) []byte {
	if p.cur != c || p.phase != phaseRunning {
		return nil
	}
	return p.scr.appendLive(nil)
}

// close ends bash and everything it started, then releases the terminal.
// Processes that have not exited when ctx is done are killed.
func (p *process) close(ctx context.Context) {
	if p.cmd != nil && p.alive() {
		killSession(ctx, p.pid)
	}
	if p.pty != nil {
		p.pty.Close()
	}
	if p.cmd != nil {
		<-p.exited
		<-p.readerDone
	}
	if p.settleT != nil {
		p.settleT.Stop()
	}
	p.cmdOut.close()
	os.RemoveAll(p.dir)
}

// noGrace returns a context that is already done: close kills at once.
func noGrace() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
