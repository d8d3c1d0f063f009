package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/actionserver/actionserver/internal/asuser"
	"github.com/actionserver/actionserver/internal/chown"
)

// UnavailableMessage is the exact text of the error observation that OpenHands
// returns when the browser is disabled or cannot start.
const UnavailableMessage = "Browser functionality is not supported or disabled."

// ErrUnavailable is returned (possibly wrapped with its cause) by Browse and
// Interact when the browser is disabled, closed or cannot be started. The
// executor answers it with an error observation whose content is
// UnavailableMessage.
var ErrUnavailable = errors.New("browser unavailable")

// DefaultStepTimeout bounds a step whose context has no deadline, like the
// 120 s an OpenHands browser step may take.
const DefaultStepTimeout = 120 * time.Second

// Viewport size of every page, BrowserGym's default.
const (
	viewportWidth  = 1280
	viewportHeight = 720
)

// Options configure a Browser. The zero value is usable: Chromium is looked
// up on the machine and files go under the current directory.
type Options struct {
	// ExecPath is the Chromium binary. Empty: Debian's chromium, then the
	// usual names on PATH.
	ExecPath string
	// WorkDir holds .browser_screenshots/, .downloads/ and the file_N copies
	// of downloads. Empty: the current directory.
	WorkDir string
	// Eager starts Chromium in the background from New instead of on the
	// first action.
	Eager bool
	// FileOwner is given the file_N copies of downloads: they are the
	// agent's to work on, like the files its actions create. The zero
	// value: they stay the server's.
	FileOwner chown.Owner
	// FileUser, when set, gives the copies of downloads its filesystem
	// rights (see package asuser): the server may be root, and the
	// workspace is the agent's. Nil: the server's own.
	FileUser *asuser.User
	// Disabled makes every action fail with ErrUnavailable
	// (--no-enable-browser).
	Disabled bool
	// Logger receives lifecycle logs. Nil: slog.Default().
	Logger *slog.Logger
}

// Browser is one headless Chromium shared by all browser actions of a
// server. It starts lazily, runs one action at a time, restarts when Chromium
// died or hung, and ends with Close. It is safe for concurrent use.
type Browser struct {
	opts Options
	log  *slog.Logger

	mu     sync.Mutex // serializes actions, start and Close
	inst   *instance
	closed bool

	// Download bookkeeping survives restarts: file_N numbering continues.
	downloadCount int

	// livePID is the running Chromium's pid, readable without mu.
	livePID atomic.Int64

	// noSandbox is set once Chromium's own sandbox failed to start: a
	// locked-down container (no capabilities, no-new-privileges, no user
	// namespaces) allows none, and is the confinement itself.
	noSandbox bool
}

// instance is one running Chromium with its tabs.
type instance struct {
	allocCancel context.CancelFunc
	root        context.Context // chromedp context of the first tab
	rootCancel  context.CancelFunc
	userDataDir string
	pid         int

	tabs    []*tab
	active  int
	history []target.ID // activation order, most recent last
	// opened is the page that the last syncTabs adopted, if any.
	opened *tab
	// closing holds pages that this package closed and that may still be
	// listed until Chromium finishes closing them.
	closing map[target.ID]bool

	downloads *downloadTracker

	// suspect is set when a step ran out of time: the next step probes the
	// browser before it trusts it.
	suspect bool
}

// tab is one page target.
type tab struct {
	ctx    context.Context
	cancel context.CancelFunc // nil for the first tab: its cancel ends Chromium
	id     target.ID
	url    string
	// Last mouse position, where wheel events go, as in Playwright.
	mouseX, mouseY float64
}

// New returns a Browser. Chromium starts on the first action, or right away in
// the background when opts.Eager is set.
func New(opts Options) *Browser {
	b := &Browser{opts: opts, log: opts.Logger}
	if b.log == nil {
		b.log = slog.Default()
	}
	if opts.Eager && !opts.Disabled {
		go func() {
			if err := b.Start(context.Background()); err != nil {
				b.log.Warn("browser eager start failed", "err", err)
			}
		}()
	}
	return b
}

// Start starts Chromium now if it is not running. Actions start it on their
// own; Start only moves the cost of the start earlier.
func (b *Browser) Start(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := b.ensure(ctx)
	return err
}

// Close ends Chromium and every process it started. An action in progress
// ends at once with a failure observation; later actions fail with
// ErrUnavailable. Close is idempotent.
func (b *Browser) Close() error {
	// Kill first, without the lock, so that a running step cannot hold
	// Close up until its deadline.
	if pid := b.livePID.Load(); pid > 0 {
		killProcessGroup(int(pid))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.inst != nil {
		b.stop(b.inst)
		b.inst = nil
	}
	return nil
}

// workDir returns the directory for screenshots and downloads.
func (b *Browser) workDir() string {
	if b.opts.WorkDir != "" {
		return b.opts.WorkDir
	}
	if wd, err := os.Getwd(); err == nil {
		return wd
	}
	return "."
}

// ensure returns a running, responsive instance, starting or restarting
// Chromium as needed. The caller holds b.mu.
func (b *Browser) ensure(ctx context.Context) (*instance, error) {
	if b.opts.Disabled {
		return nil, fmt.Errorf("%w: disabled", ErrUnavailable)
	}
	if b.closed {
		return nil, fmt.Errorf("%w: closed", ErrUnavailable)
	}
	if inst := b.inst; inst != nil {
		if b.healthy(ctx, inst) {
			return inst, nil
		}
		b.log.Warn("browser is dead or hung, restarting", "pid", inst.pid)
		b.stop(inst)
		b.inst = nil
	}
	// As root Chromium refuses its sandbox; chromedp turns it off.
	sandboxOff := b.noSandbox || os.Geteuid() == 0
	inst, err := b.start(ctx, sandboxOff)
	if err != nil && !sandboxOff && ctx.Err() == nil {
		b.log.Warn("chromium's sandbox cannot start here (no user namespaces or no-new-privileges); running chromium without it, inside the container's confinement", "err", err)
		if inst, err = b.start(ctx, true); err == nil {
			b.noSandbox = true
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	b.inst = inst
	return inst, nil
}

// healthy reports whether inst can take a step. A lost connection shows in
// the root context at no cost; a hang is only probed after a step timed out.
func (b *Browser) healthy(ctx context.Context, inst *instance) bool {
	if inst.root.Err() != nil {
		return false
	}
	if !inst.suspect {
		return true
	}
	const probeTimeout = 2 * time.Second
	pctx, cancel := bind(inst.root, ctx)
	defer cancel()
	pctx, cancel2 := context.WithTimeout(pctx, probeTimeout)
	defer cancel2()
	if _, err := chromedp.CallBrowser(pctx, cdpbrowser.GetVersion, cdp.Empty{}); err != nil {
		return false
	}
	t := inst.tabs[inst.active]
	tctx, cancel3 := bind(t.ctx, pctx)
	defer cancel3()
	if _, err := chromedp.Run(tctx, chromedp.Evaluate[int]("1")); err != nil {
		return false
	}
	inst.suspect = false
	return true
}

// findExecPath picks the Chromium binary: Debian installs the real one under
// /usr/lib/chromium, behind a shell wrapper on PATH.
func findExecPath() (string, error) {
	candidates := []string{"/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome", "headless_shell"}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found (tried /usr/lib/chromium/chromium, chromium, chromium-browser, google-chrome, headless_shell)")
}

// preferences make Chromium download PDFs instead of showing them, as
// Playwright's headless Chromium does, so a PDF link yields a download.
const preferences = `{"plugins":{"always_open_pdf_externally":true},"download":{"prompt_for_download":false}}`

func (b *Browser) start(ctx context.Context, noSandbox bool) (_ *instance, err error) {
	execPath := b.opts.ExecPath
	if execPath == "" {
		if execPath, err = findExecPath(); err != nil {
			return nil, err
		}
	}
	dlDir := filepath.Join(b.workDir(), ".downloads")
	if err := os.MkdirAll(dlDir, 0o755); err != nil {
		return nil, fmt.Errorf("create downloads directory: %w", err)
	}
	udd, err := os.MkdirTemp("", "actionserver-chromium-")
	if err != nil {
		return nil, fmt.Errorf("create profile directory: %w", err)
	}
	defer func() {
		if err != nil {
			removeProfile(udd)
		}
	}()
	if err := os.MkdirAll(filepath.Join(udd, "Default"), 0o700); err != nil {
		return nil, fmt.Errorf("create profile directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(udd, "Default", "Preferences"), []byte(preferences), 0o600); err != nil {
		return nil, fmt.Errorf("write profile preferences: %w", err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath),
		chromedp.UserDataDir(udd),
		// The machine may have no internet: without these Chromium keeps
		// trying hosts it cannot reach.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-domain-reliability", true),
		// Pages restored from the back-forward cache fire no load event.
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,BackForwardCache,MediaRouter,OptimizationHints"),
		chromedp.WindowSize(viewportWidth, viewportHeight),
		chromedp.ModifyCmdFunc(setProcessAttrs),
		// Chromium keeps config and crash reports under these; keep them in
		// the throwaway profile rather than the user's home.
		chromedp.Env("XDG_CONFIG_HOME="+filepath.Join(udd, "config"), "XDG_CACHE_HOME="+filepath.Join(udd, "cache")),
	)
	if noSandbox {
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	root, rootCancel := chromedp.NewContext(allocCtx)
	// chromedp's cancel funcs wait for the browser, and a second call after
	// a start that was cut short waits forever: call each at most once.
	allocCancel, rootCancel = sync.OnceFunc(allocCancel), sync.OnceFunc(rootCancel)
	inst := &instance{allocCancel: allocCancel, root: root, rootCancel: rootCancel, userDataDir: udd}

	// The first Run binds Chromium's life to the context it gets, so it gets
	// the root context and the caller's deadline only bounds the wait.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(root) }()
	select {
	case err = <-started:
	case <-ctx.Done():
		// Canceling ends the start; wait for it so that nothing still
		// writes the chromedp context below.
		rootCancel()
		allocCancel()
		<-started
		err = ctx.Err()
	}
	if c := chromedp.FromContext(root); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		inst.pid = c.Browser.Process().Pid
		b.livePID.Store(int64(inst.pid))
	}
	if err != nil {
		b.stop(inst)
		return nil, fmt.Errorf("start chromium %s: %w", execPath, err)
	}
	c := chromedp.FromContext(root)
	inst.tabs = []*tab{{ctx: root, id: c.Target.TargetID, url: "about:blank"}}
	inst.history = []target.ID{c.Target.TargetID}
	inst.closing = map[target.ID]bool{}

	if err := inst.tabs[0].dismissDialogs(); err != nil {
		b.stop(inst)
		return nil, fmt.Errorf("watch dialogs: %w", err)
	}
	inst.downloads = newDownloadTracker()
	if err := chromedp.ListenBrowser(root, inst.downloads.handle); err != nil {
		b.stop(inst)
		return nil, fmt.Errorf("listen for downloads: %w", err)
	}
	sctx, cancel := bind(root, ctx)
	defer cancel()
	_, err = chromedp.CallBrowser(sctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior:      cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName,
		DownloadPath:  dlDir,
		EventsEnabled: ptr(true),
	})
	if err != nil {
		b.stop(inst)
		return nil, fmt.Errorf("set download behavior: %w", err)
	}
	b.log.Info("browser started", "pid", inst.pid, "exec", execPath)
	return inst, nil
}

// stop ends an instance: its whole process group first, so that a hung
// Chromium cannot delay the cancellation, then the chromedp contexts.
func (b *Browser) stop(inst *instance) {
	if inst.pid > 0 {
		killProcessGroup(inst.pid)
		b.livePID.CompareAndSwap(int64(inst.pid), 0)
	}
	for _, t := range inst.tabs {
		if t.cancel != nil {
			t.cancel()
		}
	}
	inst.rootCancel()
	inst.allocCancel()
	if inst.userDataDir != "" {
		removeProfile(inst.userDataDir)
	}
}

// removeProfile deletes a profile directory. Helpers that are still dying can
// write into it after a first removal, so it kills them and tries again for a
// short while.
func removeProfile(dir string) {
	deadline := time.Now().Add(2 * time.Second)
	for {
		killed := killProfileProcesses(dir)
		err := os.RemoveAll(dir)
		if _, statErr := os.Stat(dir); err == nil && killed == 0 && os.IsNotExist(statErr) {
			return
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// bind derives a context from a chromedp context parent (so it carries the
// browser and target) that also ends when caller ends and keeps caller's
// deadline.
func bind(parent, caller context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	cancels := []context.CancelFunc{cancel}
	if dl, ok := caller.Deadline(); ok {
		var c context.CancelFunc
		ctx, c = context.WithDeadline(ctx, dl)
		cancels = append(cancels, c)
	}
	stop := context.AfterFunc(caller, cancel)
	return ctx, func() {
		stop()
		for _, c := range cancels {
			c()
		}
	}
}

func ptr[T any](v T) *T { return &v }
