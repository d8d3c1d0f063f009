package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/actionserver/actionserver/browser/gym"
	"github.com/actionserver/actionserver/internal/pyfmt"
)

// resolve finds the element with a bid in the active page and returns its
// remote object id.
func resolve(ctx context.Context, t *chromedp.Target, bid string) (runtime.RemoteObjectID, error) {
	arg, _ := json.Marshal(bid)
	res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{
		Expression:  fmt.Sprintf("(%s)(%s)", findJS, arg),
		ObjectGroup: objectGroup,
	})
	if err != nil {
		return "", fmt.Errorf("find element %q: %w", bid, err)
	}
	if res.ExceptionDetails != nil {
		return "", fmt.Errorf("find element %q: %s", bid, res.ExceptionDetails.Text)
	}
	if res.Result == nil || res.Result.ObjectID == "" {
		msg := fmt.Sprintf("Could not find element with bid %q", bid)
		if res.Result != nil && res.Result.Type == "string" {
			var s string
			if json.Unmarshal(res.Result.Value, &s) == nil {
				msg = s
			}
		}
		return "", gym.Errorf("ValueError", "%s", msg)
	}
	return res.Result.ObjectID, nil
}

// callOn calls a JavaScript function with the element as this and returns
// its JSON result.
func callOn(ctx context.Context, t *chromedp.Target, obj runtime.RemoteObjectID, fn string, args ...any) (json.RawMessage, error) {
	var callArgs []*runtime.CallArgument
	for _, a := range args {
		v, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		callArgs = append(callArgs, &runtime.CallArgument{Value: v})
	}
	res, err := cdp.Call(ctx, t, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: fn,
		ObjectID:            obj,
		Arguments:           callArgs,
		ReturnByValue:       ptr(true),
		AwaitPromise:        ptr(true),
	})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, fmt.Errorf("%s", exceptionText(res.ExceptionDetails))
	}
	if res.Result == nil {
		return nil, nil
	}
	return json.RawMessage(res.Result.Value), nil
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return d.Exception.Description
	}
	return d.Text
}

// center scrolls the element into view if needed and returns the middle of
// its first box, in viewport coordinates.
func center(ctx context.Context, t *chromedp.Target, obj runtime.RemoteObjectID) (x, y float64, err error) {
	_, _ = cdp.Call(ctx, t, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{ObjectID: obj})
	quads, err := cdp.Call(ctx, t, dom.GetContentQuads, dom.GetContentQuadsParams{ObjectID: obj})
	if err != nil || len(quads.Quads) == 0 || len(quads.Quads[0]) < 8 {
		return 0, 0, gym.Errorf("Error", "element is not visible")
	}
	q := quads.Quads[0]
	return (q[0] + q[2] + q[4] + q[6]) / 4, (q[1] + q[3] + q[5] + q[7]) / 4, nil
}

// onElement resolves the bid argument and runs f on the element.
func (s *step) onElement(bidValue any, f func(ctx context.Context, t *chromedp.Target, obj runtime.RemoteObjectID) error) error {
	bid, err := gym.BidArg(bidValue)
	if err != nil {
		return err
	}
	return s.run(func(ctx context.Context, t *chromedp.Target) error {
		obj, err := resolve(ctx, t, bid)
		if err != nil {
			return err
		}
		return f(ctx, t, obj)
	})
}

func mouse(ctx context.Context, t *chromedp.Target, typ input.DispatchMouseEventType, x, y float64, button input.MouseButton, clicks int64, mods int64) error {
	_, err := cdp.Call(ctx, t, input.DispatchMouseEvent, input.DispatchMouseEventParams{
		Type: typ, X: x, Y: y, Button: button, ClickCount: clicks, Modifiers: mods,
	})
	return err
}

func buttonArg(v any) (input.MouseButton, error) {
	switch v {
	case "left":
		return input.MouseButtonLeft, nil
	case "middle":
		return input.MouseButtonMiddle, nil
	case "right":
		return input.MouseButtonRight, nil
	}
	return "", gym.Errorf("Error", "button: expected one of (left|middle|right), got %s", pyfmt.Repr(v))
}

func modifiersArg(v any) (int64, error) {
	names, err := gym.StringsArg("modifiers", v)
	if err != nil {
		return 0, err
	}
	var mods int64
	for _, n := range names {
		if n == "ControlOrMeta" {
			n = "Control"
		}
		bit, ok := modifierBits[n]
		if !ok {
			return 0, gym.Errorf("Error", "modifiers: expected one of (Alt|Control|ControlOrMeta|Meta|Shift), got %s", pyfmt.Repr(n))
		}
		mods |= bit
	}
	return mods, nil
}

func (s *step) click(args map[string]any) error    { return s.clickN(args, 1) }
func (s *step) dblclick(args map[string]any) error { return s.clickN(args, 2) }

func (s *step) clickN(args map[string]any, n int64) error {
	button, err := buttonArg(args["button"])
	if err != nil {
		return err
	}
	mods, err := modifiersArg(args["modifiers"])
	if err != nil {
		return err
	}
	return s.withSettle(func() error {
		return s.onElement(args["bid"], func(ctx context.Context, t *chromedp.Target, obj runtime.RemoteObjectID) error {
			x, y, err := center(ctx, t, obj)
			if err != nil {
				return err
			}
			s.inst.activeTab().mouseX, s.inst.activeTab().mouseY = x, y
			if err := mouse(ctx, t, input.DispatchMouseEventTypeMouseMoved, x, y, input.MouseButtonNone, 0, mods); err != nil {
				return err
			}
			for i := int64(1); i <= n; i++ {
				if err := mouse(ctx, t, input.DispatchMouseEventTypeMousePressed, x, y, button, i, mods); err != nil {
					return err
				}
				if err := mouse(ctx, t, input.DispatchMouseEventTypeMouseReleased, x, y, button, i, mods); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

func (s *step) hover(args map[string]any) error {
	return s.onElement(args["bid"], func(ctx context.Context, t *chromedp.Target, obj runtime.RemoteObjectID) error {
		x, y, err := center(ctx, t, obj)
		if err != nil {
			return err
		}
		s.inst.activeTab().mouseX, s.inst.activeTab().mouseY = x, y
		return mouse(ctx, t, input.DispatchMouseEventTypeMouseMoved, x, y, input.MouseButtonNone, 0, 0)
	})
}

func (s *step) focus(args map[string]any) error {
	return s.onElement(args["bid"], func(ctx context.Context, t *chromedp.Target, obj runtime.RemoteObjectID) error {
		_, err := callOn(ctx, t, obj, `function() { this.focus(); }`)
		return err
	})
}

func (s *step) press(args map[string]any) error {
	comb, err := gym.StringArg("key_comb", args["key_comb"])
	if err != nil {
		return err
	}
	keys, err := parseKeyComb(comb)
	if err != nil {
		return err
	}
	return s.withSettle(func() error {
		return s.onElement(args["bid"], func(ctx context.Context, t *chromedp.Target, obj runtime.RemoteObjectID) error {
			if _, err := callOn(ctx, t, obj, `function() { this.focus(); }`); err != nil {
				return err
			}
			return pressKeys(ctx, t, keys)
		})
	})
}

// fillPrepare checks that the element takes text, focuses it and selects its
// content, as Playwright's fill does. It answers "type" when the caller
// should now insert the text, "done" when it set the value itself (date and
// similar inputs), or an error message.
const fillPrepare = `function(value) {
  const el = this;
  const kinds = new Set(["date", "time", "datetime-local", "month", "range", "week", "color"]);
  const text = new Set(["", "email", "number", "password", "search", "tel", "text", "url"]);
  if (el instanceof HTMLInputElement) {
    const type = (el.getAttribute("type") || "").toLowerCase();
    if (kinds.has(type)) {
      el.focus();
      el.value = type === "color" ? value.toLowerCase() : value;
      if (el.value !== (type === "color" ? value.toLowerCase() : value)) return "Malformed value";
      el.dispatchEvent(new Event("input", {bubbles: true}));
      el.dispatchEvent(new Event("change", {bubbles: true}));
      return "done";
    }
    if (!text.has(type)) return 'Input of type "' + type + '" cannot be filled';
  } else if (!(el instanceof HTMLTextAreaElement) && !el.isContentEditable) {
    return "Element is not an <input>, <textarea> or [contenteditable] element";
  }
  if (el.disabled) return "Element is disabled";
  if (el.readOnly) return "Element is not editable";
  el.focus();
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
    el.select();
  } else {
    const range = document.createRange();
    range.selectNodeContents(el);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  return "type";
}`

func (s *step) fill(args map[string]any) error {
	value, err := gym.StringArg("value", args["value"])
	if err != nil {
		return err
	}
	return s.fillValue(args["bid"], value)
}

func (s *step) clear(args map[string]any) error { return s.fillValue(args["bid"], "") }

func (s *step) fillValue(bidValue any, value string) error {
	return s.onElement(bidValue, func(ctx context.Context, t *chromedp.Target, obj runtime.RemoteObjectID) error {
		raw, err := callOn(ctx, t, obj, fillPrepare, value)
		if err != nil {
			return err
		}
		var status string
		if err := json.Unmarshal(raw, &status); err != nil {
			return fmt.Errorf("fill: %w", err)
		}
		switch status {
		case "done":
			return nil
		case "type":
		default:
			return gym.Errorf("Error", "%s", status)
		}
		if value == "" {
			keys, _ := parseKeyComb("Delete")
			return pressKeys(ctx, t, keys)
		}
		_, err = cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: value})
		return err
	})
}

// selectOptions selects the options whose value or label is one of the
// given ones and fires input and change, as Playwright's select_option.
const selectOptions = `function(wanted) {
  const el = this;
  if (!(el instanceof HTMLSelectElement)) return "Element is not a <select> element";
  const opts = Array.from(el.options);
  const picked = [];
  for (const w of wanted) {
    const o = opts.find((o) => o.value === w || o.label === w);
    if (!o) return "did not find some options";
    picked.push(o);
  }
  if (picked.length > 1 && !el.multiple) return "Element is not a <select multiple> element";
  for (const o of opts) o.selected = picked.includes(o);
  el.dispatchEvent(new Event("input", {bubbles: true}));
  el.dispatchEvent(new Event("change", {bubbles: true}));
  return "";
}`

func (s *step) selectOption(args map[string]any) error {
	wanted, err := gym.StringsArg("options", args["options"])
	if err != nil {
		return err
	}
	return s.withSettle(func() error {
		return s.onElement(args["bid"], func(ctx context.Context, t *chromedp.Target, obj runtime.RemoteObjectID) error {
			raw, err := callOn(ctx, t, obj, selectOptions, wanted)
			if err != nil {
				return err
			}
			var msg string
			if err := json.Unmarshal(raw, &msg); err != nil {
				return fmt.Errorf("select option: %w", err)
			}
			if msg != "" {
				return gym.Errorf("Error", "%s", msg)
			}
			return nil
		})
	})
}

func (s *step) dragAndDrop(args map[string]any) error {
	from, err := gym.BidArg(args["from_bid"])
	if err != nil {
		return err
	}
	to, err := gym.BidArg(args["to_bid"])
	if err != nil {
		return err
	}
	return s.run(func(ctx context.Context, t *chromedp.Target) error {
		fromObj, err := resolve(ctx, t, from)
		if err != nil {
			return err
		}
		fx, fy, err := center(ctx, t, fromObj)
		if err != nil {
			return err
		}
		toObj, err := resolve(ctx, t, to)
		if err != nil {
			return err
		}
		tx, ty, err := center(ctx, t, toObj)
		if err != nil {
			return err
		}
		s.inst.activeTab().mouseX, s.inst.activeTab().mouseY = tx, ty
		_, err = chromedp.DragAndDropXY(fx, fy, tx, ty)(ctx, t)
		return err
	})
}

// fileChooserWait bounds the wait for the file chooser that a click opens.
const fileChooserWait = 2 * time.Second

func (s *step) uploadFile(args map[string]any) error {
	files, err := gym.StringsArg("file", args["file"])
	if err != nil {
		return err
	}
	for i, f := range files {
		if !filepath.IsAbs(f) {
			f = filepath.Join(s.b.workDir(), f)
		}
		if _, err := os.Stat(f); err != nil {
			return gym.Errorf("Error", "ENOENT: no such file or directory, stat %s", pyfmt.String(f))
		}
		files[i] = f
	}
	return s.onElement(args["bid"], func(ctx context.Context, t *chromedp.Target, obj runtime.RemoteObjectID) error {
		if _, err := cdp.Call(ctx, t, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: true}); err != nil {
			return err
		}
		defer cdp.Call(context.WithoutCancel(ctx), t, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: false})
		wctx, cancel := context.WithTimeout(ctx, fileChooserWait)
		defer cancel()
		choosers := chromedp.Events(wctx, page.FileChooserOpened)
		x, y, err := center(ctx, t, obj)
		if err != nil {
			return err
		}
		for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
			if err := mouse(ctx, t, typ, x, y, input.MouseButtonLeft, 1, 0); err != nil {
				return err
			}
		}
		for ev, err := range choosers {
			if err != nil {
				break
			}
			_, err := cdp.Call(ctx, t, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: files, BackendNodeID: ev.BackendNodeID})
			return err
		}
		return gym.Errorf("TimeoutError", "Timeout %dms exceeded while waiting for event \"filechooser\"", fileChooserWait.Milliseconds())
	})
}
