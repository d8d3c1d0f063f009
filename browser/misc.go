package browser

import (
	"context"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/actionserver/actionserver/browser/gym"
)

func (s *step) noop(args map[string]any) error {
	ms, err := gym.NumberArg("wait_ms", args["wait_ms"])
	if err != nil {
		return err
	}
	select {
	case <-time.After(time.Duration(ms * float64(time.Millisecond))):
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

// Messages to the user have no effect on the page; OpenHands reads the
// agent's own text instead. Only the argument check remains.
func (s *step) sendMsg(args map[string]any) error { return requireString(args["text"]) }

func (s *step) reportInfeasible(args map[string]any) error { return requireString(args["reason"]) }

func requireString(v any) error {
	if _, ok := v.(string); !ok {
		return gym.Errorf("ValueError", "Forbidden value: %s is not a string", gym.Str(v))
	}
	return nil
}

// scroll sends a wheel event where the mouse last was, as Playwright's
// mouse.wheel, and lets the page paint the new position.
func (s *step) scroll(args map[string]any) error {
	dx, err := gym.NumberArg("delta_x", args["delta_x"])
	if err != nil {
		return err
	}
	dy, err := gym.NumberArg("delta_y", args["delta_y"])
	if err != nil {
		return err
	}
	tb := s.inst.activeTab()
	return s.run(func(ctx context.Context, t *chromedp.Target) error {
		// Sent untyped: the typed parameters leave out a zero delta, which
		// Chromium requires.
		err := t.Call(ctx, input.DispatchMouseEvent.Method, map[string]any{
			"type": input.DispatchMouseEventTypeMouseWheel, "x": tb.mouseX, "y": tb.mouseY, "deltaX": dx, "deltaY": dy,
		}, nil)
		if err != nil {
			return err
		}
		_, err = chromedp.Evaluate[chromedp.Void](`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))`, chromedp.EvalAwaitPromise)(ctx, t)
		return err
	})
}

func (s *step) newTab(map[string]any) error {
	t, err := s.inst.newTab(s.ctx)
	if err != nil {
		return err
	}
	s.inst.tabs = append(s.inst.tabs, t)
	return s.inst.focusTab(s.ctx, len(s.inst.tabs)-1)
}

func (s *step) tabClose(map[string]any) error { return s.inst.closeTab(s.ctx) }

// tabFocus activates a page by index, with Python's list indexing.
func (s *step) tabFocus(args map[string]any) error {
	idx, ok := args["index"].(int64)
	if !ok {
		if b, isBool := args["index"].(bool); isBool {
			idx, ok = 0, true
			if b {
				idx = 1
			}
		}
	}
	if !ok {
		return gym.Errorf("TypeError", "list indices must be integers or slices, not %s", gym.TypeName(args["index"]))
	}
	n := int64(len(s.inst.tabs))
	if idx < 0 {
		idx += n
	}
	if idx < 0 || idx >= n {
		return gym.Errorf("IndexError", "list index out of range")
	}
	return s.inst.focusTab(s.ctx, int(idx))
}
