package browser

import (
	"context"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/actionserver/actionserver/browser/gym"
)

// Key names follow Playwright's press(): a key value ("Enter", "ArrowDown",
// "a", "#"), a code ("KeyA", "Digit0", "ShiftLeft"), joined by "+" after
// modifiers ("Shift", "Control", "Alt", "Meta", "ControlOrMeta").

// keyByName indexes chromedp's key table by key value and by code. Codes map
// to the unshifted key, as in Playwright.
var keyByName = sync.OnceValue(func() map[string]*kb.Key {
	m := map[string]*kb.Key{}
	for _, k := range kb.Keys {
		if !k.Shift {
			m[k.Code] = k
		}
	}
	for r, k := range kb.Keys {
		if _, ok := m[k.Key]; !ok || len([]rune(k.Key)) == 1 && []rune(k.Key)[0] == r {
			m[k.Key] = k
		}
	}
	return m
})

// modifierBits are the CDP modifier flags of the modifier keys.
var modifierBits = map[string]int64{
	"Alt": 1, "Control": 2, "Meta": 4, "Shift": 8,
}

// parseKeyComb splits "Control+Shift+t" into its keys. "+" itself is written
// as the last part: "Shift++".
func parseKeyComb(comb string) ([]*kb.Key, error) {
	parts := strings.Split(comb, "+")
	if n := len(parts); n >= 2 && parts[n-1] == "" && parts[n-2] == "" {
		parts = append(parts[:n-2], "+")
	}
	keys := make([]*kb.Key, 0, len(parts))
	for _, p := range parts {
		name := p
		if name == "ControlOrMeta" {
			name = "Control"
		}
		k, ok := keyByName()[name]
		if !ok {
			return nil, gym.Errorf("Error", "Unknown key: %q", p)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// pressKeys holds the modifiers, presses the last key and releases all, in
// the page that has focus.
func pressKeys(ctx context.Context, t *chromedp.Target, keys []*kb.Key) error {
	var mods int64
	send := func(p input.DispatchKeyEventParams) error {
		_, err := cdp.Call(ctx, t, input.DispatchKeyEvent, p)
		return err
	}
	event := func(typ input.DispatchKeyEventType, k *kb.Key) input.DispatchKeyEventParams {
		return input.DispatchKeyEventParams{
			Type: typ, Modifiers: mods, Key: k.Key, Code: k.Code,
			WindowsVirtualKeyCode: k.Windows, NativeVirtualKeyCode: k.Native,
		}
	}
	last := len(keys) - 1
	for _, k := range keys[:last] {
		if bit, ok := modifierBits[k.Key]; ok {
			mods |= bit
		}
		if err := send(event(input.DispatchKeyEventTypeRawKeyDown, k)); err != nil {
			return err
		}
	}
	k := keys[last]
	down := event(input.DispatchKeyEventTypeRawKeyDown, k)
	// A printable key types its text unless a shortcut modifier is held.
	if k.Print && mods&(1|2|4) == 0 {
		down.Type = input.DispatchKeyEventTypeKeyDown
		down.Text = k.Text
		down.UnmodifiedText = k.Unmodified
		if mods&8 != 0 && strings.ToUpper(k.Text) != k.Text {
			down.Text = strings.ToUpper(k.Text)
		}
	}
	if err := send(down); err != nil {
		return err
	}
	if err := send(event(input.DispatchKeyEventTypeKeyUp, k)); err != nil {
		return err
	}
	for i := last - 1; i >= 0; i-- {
		k := keys[i]
		if bit, ok := modifierBits[k.Key]; ok {
			mods &^= bit
		}
		if err := send(event(input.DispatchKeyEventTypeKeyUp, k)); err != nil {
			return err
		}
	}
	return nil
}
