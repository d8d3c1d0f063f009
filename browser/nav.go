package browser

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/actionserver/actionserver/browser/gym"
)

// maxNavigation bounds one navigation, like Playwright's timeout in
// OpenHands' browser environment.
const maxNavigation = 100 * time.Second

// navBudget is how long a navigation may wait for its page to load: what is
// left of the step, minus time to read the observation afterwards.
func (s *step) navBudget() time.Duration {
	left := s.remaining()
	reserve := left / 4
	if reserve > 3*time.Second {
		reserve = 3 * time.Second
	}
	return min(left-reserve, maxNavigation)
}

// loadAction waits, within the navigation budget, for the page that action
// starts to load. method names the call in errors (Page.goto, ...). A page
// that does not load in time is stopped and reported as a TimeoutError.
func (s *step) loadAction(method, url string, action chromedp.Action[chromedp.Void]) error {
	budget := s.navBudget()
	ctx, cancel := s.tabCtx(budget)
	defer cancel()
	err := chromedp.Do(ctx, action)
	if err == nil {
		return nil
	}
	if s.ctx.Err() != nil {
		return err
	}
	var le *chromedp.LoadError
	switch {
	case errors.As(err, &le):
		return gym.Errorf("Error", "%s: %s at %s", method, le.ErrorText, url)
	case errors.Is(err, context.DeadlineExceeded):
		// Stop the page so that it does not keep loading into the next step.
		sctx, scancel := s.tabCtx(time.Second)
		defer scancel()
		_ = chromedp.Do(sctx, chromedp.Stop())
		return gym.Errorf("TimeoutError", "%s: Timeout %dms exceeded.", method, budget.Milliseconds())
	default:
		return gym.Errorf("Error", "%s: %v", method, err)
	}
}

// navigate loads url in the active page and waits for its load event.
func (s *step) navigate(url string) error {
	return s.loadAction("Page.goto", url, chromedp.Navigate(url))
}

func (s *step) gotoAction(args map[string]any) error {
	url, err := gym.StringArg("url", args["url"])
	if err != nil {
		return err
	}
	return s.navigate(url)
}

func (s *step) goBack(map[string]any) error    { return s.history(-1, "Page.go_back") }
func (s *step) goForward(map[string]any) error { return s.history(+1, "Page.go_forward") }

// history moves through the session history; like Playwright it does
// nothing when there is no entry in that direction.
func (s *step) history(delta int, method string) error {
	var hist page.GetNavigationHistoryResult
	err := s.run(func(ctx context.Context, t *chromedp.Target) error {
		var err error
		hist, err = cdp.Call(ctx, t, page.GetNavigationHistory, cdp.Empty{})
		return err
	})
	if err != nil {
		return fmt.Errorf("read navigation history: %w", err)
	}
	i := int(hist.CurrentIndex) + delta
	if i < 0 || i >= len(hist.Entries) {
		return nil
	}
	e := hist.Entries[i]
	return s.loadAction(method, e.URL, chromedp.NavigateToHistoryEntry(e.ID))
}

// navWatch notices whether an action started a navigation in the page, and
// when that navigation has its document.
type navWatch struct {
	mu      sync.Mutex
	started bool
	done    bool
	// committed: the navigation reached a document. One that stops without
	// has usually turned into a download.
	committed bool
	signal    chan struct{} // receives after every change
}

func (w *navWatch) handle(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev.(type) {
	case *page.EventFrameRequestedNavigation, *page.EventFrameStartedLoading, *page.EventFrameStartedNavigating:
		w.started = true
		w.done = false
		w.committed = false
	case *page.EventFrameNavigated:
		w.committed = true
	case *page.EventDomContentEventFired, *page.EventNavigatedWithinDocument:
		w.committed = true
		if w.started {
			w.done = true
		}
	case *page.EventFrameStoppedLoading:
		if w.started {
			w.done = true
		}
	default:
		return
	}
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

func (w *navWatch) state() (started, done bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.started, w.done
}

// noDocument reports a navigation that started and has no document (yet).
func (w *navWatch) noDocument() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.started && !w.committed
}

// Settling after an action that may navigate: how long to wait for a
// navigation to start, and for its document once it started (as BrowserGym
// waits for DOMContentLoaded).
const (
	settleStart = 150 * time.Millisecond
	settleLoad  = 3 * time.Second
)

// withSettle runs act, then waits for a navigation that it started to reach
// its new document.
func (s *step) withSettle(act func() error) error {
	w := &navWatch{signal: make(chan struct{}, 1)}
	lctx, cancel := s.tabCtx(0)
	defer cancel()
	if err := chromedp.Listen(lctx, w.handle); err != nil {
		return fmt.Errorf("watch navigation: %w", err)
	}
	if err := act(); err != nil {
		return err
	}
	// Chromium announces a download only after the navigation that turned
	// into it has stopped; the step then waits for the announcement.
	defer func() { s.navNoDocument = s.navNoDocument || w.noDocument() }()
	startBy := time.Now().Add(settleStart)
	loadBy := time.Time{}
	for {
		started, done := w.state()
		now := time.Now()
		switch {
		case done:
			return nil
		case !started && now.After(startBy):
			return nil
		case started && loadBy.IsZero():
			loadBy = now.Add(settleLoad)
		case started && now.After(loadBy):
			return nil
		}
		wait := time.Until(startBy)
		if started {
			wait = time.Until(loadBy)
		}
		select {
		case <-w.signal:
		case <-time.After(max(wait, time.Millisecond)):
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
	}
}
