package executor

import (
	"context"
	"errors"
	"fmt"

	"github.com/actionserver/actionserver/browser"
	"github.com/actionserver/actionserver/event"
)

// browse runs "browse" and "browse_interactive" on the one browser. The
// action's timeout bounds the step; without one the browser's default
// (120 s, as upstream) applies.
func (e *Executor) browse(ctx context.Context, a event.Action) (event.Observation, error) {
	if t := a.ActionHeader().HardTimeout(); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	var obs *browser.Observation
	var err error
	switch a := a.(type) {
	case *event.BrowseURL:
		obs, err = e.browser.Browse(ctx, a.URL, a.ReturnAXTree)
	case *event.BrowseInteractive:
		obs, err = e.browser.Interact(ctx, a.BrowserActions, a.ReturnAXTree)
	default:
		return nil, fmt.Errorf("not a browser action: %s", a.Type())
	}
	if errors.Is(err, browser.ErrUnavailable) {
		if e.opts.EnableBrowser {
			// Enabled but unusable (no Chromium, failed start): say why.
			e.log.Warn("browser unavailable", "error", err)
		}
		return &event.ErrorObservation{Content: browser.UnavailableMessage}, nil
	}
	if err != nil {
		return nil, err
	}
	if obs.Download != nil {
		return &event.FileDownload{Content: obs.Download.Content, FilePath: obs.Download.Path}, nil
	}
	out := &event.BrowserOutput{
		Content: obs.Content, URL: obs.URL, TriggerByAction: obs.TriggerByAction,
		Screenshot: obs.Screenshot, SetOfMarks: obs.SetOfMarks, Error: obs.Error,
		GoalImageURLs: obs.GoalImageURLs, OpenPagesURLs: obs.OpenPagesURLs,
		ActivePageIndex: obs.ActivePageIndex, DOMObject: obs.DOMObject, AXTreeObject: obs.AXTreeObject,
		ExtraElementProperties: obs.ExtraElementProperties, LastBrowserAction: obs.LastBrowserAction,
		LastBrowserActionError: obs.LastBrowserActionError, FocusedElementBID: obs.FocusedElementBID,
		FilterVisibleOnly: obs.FilterVisibleOnly,
	}
	if obs.ScreenshotPath != "" {
		out.ScreenshotPath = event.StrPtr(obs.ScreenshotPath)
	}
	return out, nil
}
