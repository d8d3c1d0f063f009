package browser

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Tabs follow Playwright's model that BrowserGym exposes: pages in the order
// they were opened, one of them active; a page opened by the page itself
// becomes active; closing the active page activates the last one.

func (inst *instance) activeTab() *tab { return inst.tabs[inst.active] }

func (inst *instance) pageURLs() []string {
	urls := make([]string, len(inst.tabs))
	for i, t := range inst.tabs {
		urls[i] = t.url
	}
	return urls
}

// activate makes tabs[i] the active tab.
func (inst *instance) activate(i int) {
	inst.active = i
	id := inst.tabs[i].id
	inst.history = slices.DeleteFunc(inst.history, func(h target.ID) bool { return h == id })
	inst.history = append(inst.history, id)
}

// syncTabs reconciles the tabs with the page targets of the browser: it drops
// pages that closed, adopts pages that the pages opened, and refreshes URLs.
func (inst *instance) syncTabs(ctx context.Context) error {
	bctx, cancel := bind(inst.root, ctx)
	defer cancel()
	infos, err := chromedp.Targets(bctx)
	if err != nil {
		return fmt.Errorf("list browser targets: %w", err)
	}
	pages := map[target.ID]*target.Info{}
	var order []target.ID
	for _, info := range infos {
		if info.Type == "page" && !inst.closing[info.TargetID] {
			pages[info.TargetID] = info
			order = append(order, info.TargetID)
		}
	}
	activeID := inst.tabs[inst.active].id
	var kept []*tab
	for _, t := range inst.tabs {
		if info, ok := pages[t.id]; ok {
			t.url = info.URL
			kept = append(kept, t)
			delete(pages, t.id)
		} else if t.cancel != nil {
			t.cancel()
		}
	}
	inst.tabs = kept
	var opened *tab
	for _, id := range order {
		info, ok := pages[id]
		if !ok {
			continue
		}
		t, err := inst.attach(ctx, id)
		if err != nil {
			return fmt.Errorf("attach to new page: %w", err)
		}
		t.url = info.URL
		inst.tabs = append(inst.tabs, t)
		opened = t
	}
	inst.history = slices.DeleteFunc(inst.history, func(h target.ID) bool {
		return !slices.ContainsFunc(inst.tabs, func(t *tab) bool { return t.id == h })
	})
	if len(inst.tabs) == 0 {
		t, err := inst.newTab(ctx)
		if err != nil {
			return err
		}
		inst.tabs = append(inst.tabs, t)
		opened = t
	}
	inst.opened = opened
	switch {
	case opened != nil:
		activeID = opened.id
	case !slices.ContainsFunc(inst.tabs, func(t *tab) bool { return t.id == activeID }):
		activeID = inst.tabs[len(inst.tabs)-1].id
		if n := len(inst.history); n > 0 {
			activeID = inst.history[n-1]
		}
	}
	for i, t := range inst.tabs {
		if t.id == activeID {
			inst.activate(i)
		}
	}
	return nil
}

// attach makes a tab for an existing page target. The first Run of a chromedp
// context binds the target to the context it gets, so it runs on the tab's own
// context while ctx only bounds the wait.
func (inst *instance) attach(ctx context.Context, id target.ID) (*tab, error) {
	tctx, cancel := chromedp.NewContext(inst.root, chromedp.WithTargetID(id))
	return runFirst(ctx, tctx, cancel)
}

// newTab opens a blank page.
func (inst *instance) newTab(ctx context.Context) (*tab, error) {
	tctx, cancel := chromedp.NewContext(inst.root)
	t, err := runFirst(ctx, tctx, cancel)
	if err != nil {
		return nil, fmt.Errorf("open a new page: %w", err)
	}
	t.url = "about:blank"
	return t, nil
}

func runFirst(ctx, tctx context.Context, cancel context.CancelFunc) (*tab, error) {
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(tctx) }()
	select {
	case err := <-done:
		if err != nil {
			cancel()
			return nil, err
		}
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
	t := &tab{ctx: tctx, cancel: cancel, id: chromedp.FromContext(tctx).Target.TargetID}
	if err := t.dismissDialogs(); err != nil {
		cancel()
		return nil, err
	}
	return t, nil
}

// dismissDialogs answers the JavaScript dialogs of the tab's page as
// Playwright does when nobody handles them: dismissed, except beforeunload,
// which is accepted so that navigations go on. A dialog left open would block
// every later command to the page.
func (t *tab) dismissDialogs() error {
	return chromedp.Listen(t.ctx, func(ev any) {
		e, ok := ev.(*page.EventJavascriptDialogOpening)
		if !ok {
			return
		}
		// The listener must not send commands itself.
		go func() {
			ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
			defer cancel()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{
				Accept: e.Type == page.DialogTypeBeforeunload,
			})
		}()
	})
}

// closeTab closes the active tab and activates the most recent other one,
// opening a blank page when it was the last.
func (inst *instance) closeTab(ctx context.Context) error {
	if len(inst.tabs) == 1 {
		t, err := inst.newTab(ctx)
		if err != nil {
			return err
		}
		inst.tabs = append(inst.tabs, t)
	}
	closing := inst.activeTab()
	inst.closing[closing.id] = true
	if closing.cancel != nil {
		// Canceling a tab's context closes its page.
		closing.cancel()
	} else {
		// The first tab's context carries the browser: close the page only.
		bctx, cancel := bind(inst.root, ctx)
		defer cancel()
		if _, err := chromedp.CallBrowser(bctx, target.CloseTarget, target.CloseTargetParams{TargetID: closing.id}); err != nil {
			return fmt.Errorf("close page: %w", err)
		}
	}
	inst.tabs = slices.DeleteFunc(inst.tabs, func(t *tab) bool { return t == closing })
	inst.history = slices.DeleteFunc(inst.history, func(h target.ID) bool { return h == closing.id })
	next := len(inst.tabs) - 1
	if n := len(inst.history); n > 0 {
		next = slices.IndexFunc(inst.tabs, func(t *tab) bool { return t.id == inst.history[n-1] })
	}
	return inst.focusTab(ctx, next)
}

// focusTab activates tabs[i] and brings its page to the front.
func (inst *instance) focusTab(ctx context.Context, i int) error {
	inst.activate(i)
	bctx, cancel := bind(inst.root, ctx)
	defer cancel()
	if _, err := chromedp.CallBrowser(bctx, target.ActivateTarget, target.ActivateTargetParams{TargetID: inst.tabs[i].id}); err != nil {
		return fmt.Errorf("activate page: %w", err)
	}
	return nil
}
