package browser

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// pageState is what one observation extracts from the active page.
type pageState struct {
	url        string
	focusedBID string
	screenshot []byte
	snap       *pageSnapshot
	tree       *axTree
}

type markResult struct {
	Focused string   `json:"focused"`
	Som     []string `json:"som"`
	VW      float64  `json:"vw"`
	VH      float64  `json:"vh"`
}

// extract marks the page and reads its URL, snapshot, accessibility tree and
// screenshot. withSom also computes the set-of-marks flags, which cost a hit
// test per element.
func extract(ctx context.Context, withSom bool) (*pageState, error) {
	st := &pageState{}
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		var mark markResult
		res, err := chromedp.Evaluate[[]byte](fmt.Sprintf("(%s)(%t)", markJS, withSom))(ctx, t)
		if err != nil {
			return fmt.Errorf("mark page elements: %w", err)
		}
		if err := json.Unmarshal(res, &mark); err != nil {
			return fmt.Errorf("decode page marks: %w", err)
		}
		st.focusedBID = mark.Focused

		snap, err := cdp.Call(ctx, t, domsnapshot.CaptureSnapshot, domsnapshot.CaptureSnapshotParams{
			ComputedStyles:  []string{},
			IncludeDOMRects: ptr(true),
		})
		if err != nil {
			return fmt.Errorf("capture DOM snapshot: %w", err)
		}
		st.snap = newPageSnapshot(&snap, mark.Som, mark.VW, mark.VH)

		var frames [][]json.RawMessage
		for i, fid := range st.snap.frames {
			var res struct {
				Nodes []json.RawMessage `json:"nodes"`
			}
			params := map[string]any{}
			if fid != "" {
				params["frameId"] = fid
			}
			if err := t.Call(ctx, "Accessibility.getFullAXTree", params, &res); err != nil {
				if i == 0 {
					return fmt.Errorf("get accessibility tree: %w", err)
				}
				continue // a frame that went away meanwhile
			}
			frames = append(frames, res.Nodes)
		}
		if st.tree, err = buildAXTree(frames, st.snap); err != nil {
			return err
		}

		shot, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
		if err != nil {
			return fmt.Errorf("capture screenshot: %w", err)
		}
		st.screenshot = shot.Data

		hist, err := cdp.Call(ctx, t, page.GetNavigationHistory, cdp.Empty{})
		if err != nil {
			return fmt.Errorf("read page URL: %w", err)
		}
		if hist.CurrentIndex >= 0 && int(hist.CurrentIndex) < len(hist.Entries) {
			st.url = hist.Entries[hist.CurrentIndex].URL
		}
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return st, nil
}

// saveScreenshot writes the PNG under <workdir>/.browser_screenshots with
// OpenHands' timestamped name and returns its path. The workspace is the
// agent's: the directory and the file are made with the sandbox user's
// rights (Options.FileUser), so a link planted as .browser_screenshots
// leads only where that user could write.
func (b *Browser) saveScreenshot(png []byte) (string, error) {
	dir := filepath.Join(b.workDir(), ".browser_screenshots")
	now := time.Now()
	name := fmt.Sprintf("screenshot_%s_%06d.png", now.Format("20060102_150405"), now.Nanosecond()/1000)
	path := filepath.Join(dir, name)
	err := b.opts.FileUser.Do(func() error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create screenshot directory: %w", err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			return fmt.Errorf("save screenshot: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return path, nil
}

// observation turns an extracted page into the browse observation fields
// shared by both triggers; the caller adds the content.
func (b *Browser) observation(inst *instance, st *pageState, trigger, action, actionErr string, returnAXTree bool) *Observation {
	o := emptyObservation(trigger)
	o.URL = st.url
	o.OpenPagesURLs = inst.pageURLs()
	o.ActivePageIndex = inst.active
	o.LastBrowserAction = action
	o.LastBrowserActionError = actionErr
	o.Error = actionErr != ""
	o.FocusedElementBID = st.focusedBID
	if len(st.screenshot) > 0 {
		o.Screenshot = "data:image/png;base64," + base64.StdEncoding.EncodeToString(st.screenshot)
		o.SetOfMarks = o.Screenshot
		if path, err := b.saveScreenshot(st.screenshot); err != nil {
			b.log.Warn("save screenshot", "err", err)
		} else {
			o.ScreenshotPath = path
		}
	}
	if returnAXTree {
		o.AXTreeObject = st.tree.object()
		o.ExtraElementProperties = st.snap.extraProperties()
	}
	return o
}
