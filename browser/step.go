package browser

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/actionserver/actionserver/browser/gym"
)

// TimeoutMessage is the failure text of a step that ran out of time, as
// OpenHands words it.
const TimeoutMessage = "Browser environment took too long to respond."

// step is one browser action being executed.
type step struct {
	b    *Browser
	inst *instance
	// ctx ends at the step's deadline.
	ctx      context.Context
	deadline time.Time
	// navNoDocument: an action started a navigation that stopped without
	// a document, as one that turned into a download does.
	navNoDocument bool
}

// remaining is the time left before the step's deadline.
func (s *step) remaining() time.Duration { return time.Until(s.deadline) }

// tabCtx derives a context for commands to the active tab, bounded by the
// step, and optionally by a shorter timeout.
func (s *step) tabCtx(timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := bind(s.inst.activeTab().ctx, s.ctx)
	if timeout <= 0 {
		return ctx, cancel
	}
	ctx, cancel2 := context.WithTimeout(ctx, timeout)
	return ctx, func() { cancel2(); cancel() }
}

// run runs f on the active tab's target, bounded by the step.
func (s *step) run(f func(ctx context.Context, t *chromedp.Target) error) error {
	ctx, cancel := s.tabCtx(0)
	defer cancel()
	err := chromedp.Do(ctx, chromedp.Func(f))
	_, _ = chromedp.Run(ctx, releaseObjects)
	return err
}

// objectGroup holds the remote objects of a step's element lookups.
const objectGroup = "actionserver"

var releaseObjects chromedp.Action[chromedp.Void] = func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
	return chromedp.Void{}, t.Call(ctx, runtime.ReleaseObjectGroup.Method, runtime.ReleaseObjectGroupParams{ObjectGroup: objectGroup}, nil)
}

// Browse navigates the active page to url and returns the browse observation
// with the page as Markdown. A navigation that fails (unknown host, refused
// connection, timeout) yields the failure form of the observation, not an
// error. The error is ErrUnavailable (wrapped) when the browser is disabled,
// closed or cannot start. ctx carries the step's deadline; without one the
// step gets DefaultStepTimeout.
func (b *Browser) Browse(ctx context.Context, url string, returnAXTree bool) (*Observation, error) {
	url = normalizeURL(url)
	// OpenHands writes the URL between quotes as it is, without escaping.
	action := `goto("` + url + `")`
	return b.step(ctx, TriggerBrowse, action, url, returnAXTree, func(s *step) (string, error) {
		if err := s.navigate(url); err != nil {
			return "", err
		}
		return "", nil
	})
}

// Interact runs a BrowserGym action program (see gym.Parse) on the active
// page and returns the browse_interactive observation. An action that fails
// does not fail the step: its error is in LastBrowserActionError and in the
// content. When the step downloaded a file, the observation's Download is
// set. Errors and deadlines are as for Browse.
func (b *Browser) Interact(ctx context.Context, code string, returnAXTree bool) (*Observation, error) {
	return b.step(ctx, TriggerBrowseInteractive, code, "", returnAXTree, func(s *step) (string, error) {
		return s.runProgram(code)
	})
}

// normalizeURL turns what an agent gives as a URL into one Chromium can open.
// OpenHands prefixes anything not starting with "http" with its working
// directory, which gives nonsense; a scheme-less host gets http:// instead
// and an absolute path file://.
func normalizeURL(u string) string {
	switch {
	case strings.HasPrefix(u, "http"), strings.Contains(u, "://"):
		return u
	case strings.HasPrefix(u, "/"):
		return "file://" + u
	}
	if scheme, _, ok := strings.Cut(u, ":"); ok {
		switch strings.ToLower(scheme) {
		case "about", "data", "javascript", "blob", "chrome", "view-source":
			return u
		}
	}
	return "http://" + u
}

// step runs one action under the lock: it makes sure Chromium runs, runs
// body, and extracts the observation. body returns the action error text
// ("" on success), or a non-nil error when the step cannot go on.
func (b *Browser) step(ctx context.Context, trigger, action, askedURL string, returnAXTree bool, body func(*step) (string, error)) (*Observation, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStepTimeout)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()

	inst, err := b.ready(ctx)
	if err != nil {
		if ctx.Err() != nil {
			if b.inst != nil {
				b.inst.suspect = true
			}
			return FailureObservation(trigger, askedURL, TimeoutMessage), nil
		}
		return nil, err
	}
	s := &step{b: b, inst: inst, ctx: ctx, deadline: deadline}
	fail := func(err error) (*Observation, error) {
		msg := err.Error()
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			inst.suspect = true
			msg = TimeoutMessage
		}
		b.log.Debug("browser step failed", "trigger", trigger, "err", err)
		return FailureObservation(trigger, askedURL, msg), nil
	}
	mark := inst.downloads.mark()

	actionErr, err := body(s)
	if err != nil {
		return fail(err)
	}

	var dl *Download
	if trigger == TriggerBrowseInteractive {
		dls := inst.downloads.since(mark)
		if len(dls) == 0 && (strings.Contains(actionErr, "net::ERR_ABORTED") || s.navNoDocument) {
			// A navigation that turned into a download is aborted before
			// the download is announced.
			dls = inst.downloads.waitBegin(ctx, mark, time.Second)
		}
		// Leave time to read the page if the download does not finish.
		dctx, cancel := context.WithTimeout(ctx, s.navBudget())
		dl = b.collectDownload(dctx, dls, action)
		cancel()
	}

	if err := inst.syncTabs(ctx); err != nil {
		return fail(err)
	}
	if inst.opened != nil && inst.opened == inst.activeTab() {
		s.waitDocument()
	}
	st, err := s.extract(returnAXTree)
	if err != nil {
		return fail(err)
	}
	o := b.observation(inst, st, trigger, action, actionErr, returnAXTree)
	o.Download = dl
	if trigger == TriggerBrowse {
		o.Content = BrowseText(o.URL, actionErr, markdown(st.snap))
	} else {
		o.Content = InteractiveText(o.URL, o.FocusedElementBID, o.ScreenshotPath, actionErr, st.tree.flatten(st.snap.props))
	}
	return o, nil
}

// ready returns a running instance with its tabs in sync. Chromium can die
// between two steps without the loss of its connection being noticed yet; the
// first command then fails, and Chromium is restarted once.
func (b *Browser) ready(ctx context.Context) (*instance, error) {
	inst, err := b.ensure(ctx)
	if err != nil {
		return nil, err
	}
	if err := inst.syncTabs(ctx); err == nil || ctx.Err() != nil {
		return inst, err
	}
	b.log.Warn("browser does not answer, restarting", "pid", inst.pid, "err", err)
	b.stop(inst)
	b.inst = nil
	if inst, err = b.ensure(ctx); err != nil {
		return nil, err
	}
	if err := inst.syncTabs(ctx); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return inst, nil
}

// waitDocument gives a page that was just opened by another one (a link to a
// new window) the time to get its document, as BrowserGym waits for
// DOMContentLoaded of every page. It gives up silently after settleLoad.
func (s *step) waitDocument() {
	ctx, cancel := s.tabCtx(settleLoad)
	defer cancel()
	for ctx.Err() == nil {
		state, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.readyState, location.href]`))
		if err == nil && len(state) == 2 && state[0] != "loading" && state[1] != "about:blank" {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// extract reads the active page, retrying while the page is between two
// documents.
func (s *step) extract(withSom bool) (*pageState, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		ctx, cancel := s.tabCtx(0)
		st, err := extract(ctx, withSom)
		cancel()
		if err == nil {
			return st, nil
		}
		lastErr = err
		if s.ctx.Err() != nil {
			return nil, err
		}
		// The page navigated while it was read; try again on the new one.
		select {
		case <-time.After(100 * time.Millisecond):
		case <-s.ctx.Done():
			return nil, s.ctx.Err()
		}
	}
	return nil, lastErr
}

// runProgram runs an action program on the page. It returns the error text
// of the first action that failed, as BrowserGym's step reports it.
func (s *step) runProgram(code string) (string, error) {
	perform := performers()
	return gym.Run(s.ctx, code, func(name string, args map[string]any) error {
		f, ok := perform[name]
		if !ok {
			return fmt.Errorf("action %s is not implemented", name)
		}
		return f(s, args)
	})
}

// performers maps each action of gym's set to the step method that performs
// it on the page. It is built per call so that no mutable table is shared.
func performers() map[string]func(*step, map[string]any) error {
	return map[string]func(*step, map[string]any) error{
		"noop":              (*step).noop,
		"send_msg_to_user":  (*step).sendMsg,
		"report_infeasible": (*step).reportInfeasible,
		"scroll":            (*step).scroll,
		"fill":              (*step).fill,
		"select_option":     (*step).selectOption,
		"click":             (*step).click,
		"dblclick":          (*step).dblclick,
		"hover":             (*step).hover,
		"press":             (*step).press,
		"focus":             (*step).focus,
		"clear":             (*step).clear,
		"drag_and_drop":     (*step).dragAndDrop,
		"upload_file":       (*step).uploadFile,
		"go_back":           (*step).goBack,
		"go_forward":        (*step).goForward,
		"goto":              (*step).gotoAction,
		"tab_close":         (*step).tabClose,
		"tab_focus":         (*step).tabFocus,
		"new_tab":           (*step).newTab,
	}
}
