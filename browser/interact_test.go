package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/chown"
)

// interact runs an action program and requires the step itself to work.
func interact(t *testing.T, b *Browser, code string, returnAXTree bool) *Observation {
	t.Helper()
	obs, err := b.Interact(stepCtx(t, 30*time.Second), code, returnAXTree)
	require.NoError(t, err)
	require.NotNil(t, obs)
	return obs
}

func gotoPage(t *testing.T, b *Browser, url string) *Observation {
	t.Helper()
	obs := interact(t, b, fmt.Sprintf("goto(%q)", url), false)
	require.False(t, obs.Error, obs.LastBrowserActionError)
	return obs
}

func TestInteract_ObservationHasExactLayout(t *testing.T) {
	base := serve(t)
	b, dir := newTestBrowser(t)

	obs := gotoPage(t, b, base+"/form.html")

	assert.Equal(t, TriggerBrowseInteractive, obs.TriggerByAction)
	assert.Equal(t, base+"/form.html", obs.URL)
	assert.Equal(t, fmt.Sprintf("goto(%q)", base+"/form.html"), obs.LastBrowserAction)
	require.NotEmpty(t, obs.ScreenshotPath)
	assert.Equal(t, filepath.Join(dir, ".browser_screenshots"), filepath.Dir(obs.ScreenshotPath))
	head := "[Current URL: " + base + "/form.html]\n" +
		"[Focused element bid: " + obs.FocusedElementBID + "]\n" +
		"[Screenshot saved to: " + obs.ScreenshotPath + "]\n" +
		"\n" +
		"[Action executed successfully.]\n" +
		"Accessibility tree of the COMPLETE webpage:\n" +
		"Note: [bid] is the unique alpha-numeric identifier at the beginning of lines for each element in the AXTree. Always use bid to refer to elements in your actions.\n" +
		"============== BEGIN accessibility tree ==============\n" +
		"RootWebArea 'Test Form'"
	assert.True(t, strings.HasPrefix(obs.Content, head), obs.Content)
	assert.True(t, strings.HasSuffix(obs.Content, "\n============== END accessibility tree ==============\n"), obs.Content)
	assert.Regexp(t, `\n\t\[\d+\] heading 'Test Form'\n`, obs.Content)
	assert.Regexp(t, `\[\d+\] combobox '' value='Select an option'`, obs.Content)
	assert.Regexp(t, `\[\d+\] button 'Test Button', clickable`, obs.Content)
	assert.NotEmpty(t, obs.FocusedElementBID)
	assert.Empty(t, obs.AXTreeObject)
}

func TestInteract_ClickButtonChangesText(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	obs := gotoPage(t, b, base+"/form.html")
	button := bidOf(t, obs.Content, "button 'Test Button'")
	assert.NotContains(t, obs.Content, "Button clicked!")

	obs = interact(t, b, fmt.Sprintf("click(%q)", button), false)

	assert.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Contains(t, obs.Content, "StaticText 'Button clicked!'")
}

func TestInteract_FillAndClearTextBoxShowValueInTree(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	obs := gotoPage(t, b, base+"/form.html")
	input := bidOf(t, obs.Content, "'Enter text'")
	area := bidOf(t, obs.Content, "'Enter message'")

	obs = interact(t, b, fmt.Sprintf("fill(%q, \"Hello World\")\nfill(%q, 'It\\'s a \"test\"')", input, area), false)

	require.False(t, obs.Error, obs.LastBrowserActionError)
	els := axElements(obs.Content)
	assert.Contains(t, els[input], "value='Hello World'")
	assert.Contains(t, els[area], `value='It\'s a "test"'`)
	assert.Equal(t, area, obs.FocusedElementBID)

	obs = interact(t, b, fmt.Sprintf("clear(%q)", input), false)
	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.NotContains(t, axElements(obs.Content)[input], "Hello World")
}

func TestInteract_SelectOptionByValueOrLabel(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	obs := gotoPage(t, b, base+"/form.html")
	sel := bidOf(t, obs.Content, "combobox")

	tests := []struct {
		option string
		want   string
	}{
		{"option2", "value='Option 2'"},
		{"Option 1", "value='Option 1'"},
	}
	for _, tt := range tests {
		obs = interact(t, b, fmt.Sprintf("select_option(%q, %q)", sel, tt.option), false)
		require.False(t, obs.Error, obs.LastBrowserActionError)
		assert.Contains(t, axElements(obs.Content)[sel], tt.want)
	}

	obs = interact(t, b, fmt.Sprintf("select_option(%q, 'nope')", sel), false)
	assert.True(t, obs.Error)
	assert.Equal(t, "Error: did not find some options", obs.LastBrowserActionError)
}

func TestInteract_PressEnterSubmitsForm(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	obs := gotoPage(t, b, base+"/form.html")
	input := bidOf(t, obs.Content, "'Enter text'")

	obs = interact(t, b, fmt.Sprintf("fill(%q, 'abc')\npress(%q, 'Enter')", input, input), false)

	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Equal(t, base+"/submitted.html?text=abc&message=&option=", obs.URL)
	assert.Contains(t, obs.Content, "heading 'Form submitted'")
}

func TestInteract_PressBackspaceEditsValue(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	obs := gotoPage(t, b, base+"/form.html")
	input := bidOf(t, obs.Content, "'Enter text'")

	obs = interact(t, b, fmt.Sprintf("fill(%q, 'TestValue123')\npress(%q, 'Backspace')", input, input), false)

	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Contains(t, axElements(obs.Content)[input], "value='TestValue12'")
}

func TestInteract_GoBackAndForward(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	gotoPage(t, b, base+"/page1.html")
	gotoPage(t, b, base+"/page2.html")

	steps := []struct {
		code string
		url  string
	}{
		{"go_back()", base + "/page1.html"},
		{"go_forward()", base + "/page2.html"},
		{"go_back()\ngo_back()", "about:blank"},
		{"go_back()", "about:blank"}, // nothing before: no error, no move
	}
	for _, s := range steps {
		obs := interact(t, b, s.code, false)
		assert.False(t, obs.Error, obs.LastBrowserActionError)
		assert.Equal(t, s.url, obs.URL, s.code)
	}
}

func TestInteract_ClickLinkNavigates(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	obs := gotoPage(t, b, base+"/page1.html")
	link := bidOf(t, obs.Content, "link 'Go to Page 2'")

	obs = interact(t, b, fmt.Sprintf("click(%q)", link), false)

	assert.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Equal(t, base+"/page2.html", obs.URL)
	assert.Contains(t, obs.Content, "heading 'Page 2'")
}

func TestInteract_OpenFocusAndCloseTabs(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	gotoPage(t, b, base+"/page1.html")

	obs := interact(t, b, fmt.Sprintf("new_tab()\ngoto(%q)", base+"/page2.html"), false)
	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Equal(t, []string{base + "/page1.html", base + "/page2.html"}, obs.OpenPagesURLs)
	assert.Equal(t, 1, obs.ActivePageIndex)

	obs = interact(t, b, "tab_focus(0)", false)
	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Equal(t, 0, obs.ActivePageIndex)
	assert.Equal(t, base+"/page1.html", obs.URL)

	obs = interact(t, b, "tab_focus(5)", false)
	assert.Equal(t, "IndexError: list index out of range", obs.LastBrowserActionError)

	obs = interact(t, b, "tab_close()", false)
	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Equal(t, []string{base + "/page2.html"}, obs.OpenPagesURLs)
	assert.Equal(t, 0, obs.ActivePageIndex)
	assert.Equal(t, base+"/page2.html", obs.URL)

	// Closing the last page leaves a blank one, as in BrowserGym.
	obs = interact(t, b, "tab_close()", false)
	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Equal(t, []string{"about:blank"}, obs.OpenPagesURLs)
}

func TestInteract_DownloadIsCopiedToWorkDir(t *testing.T) {
	base := serve(t)
	b, dir := newTestBrowser(t)
	gotoPage(t, b, base+"/download.html")

	code := fmt.Sprintf("goto(%q)", base+"/doc.pdf")
	obs := interact(t, b, code, false)

	require.NotNil(t, obs.Download, "content: %s", obs.Content)
	want := filepath.Join(dir, "file_1.pdf")
	assert.Equal(t, want, obs.Download.Path)
	assert.Equal(t, "Execution of the previous action "+code+" resulted in a file download. The downloaded file is saved at location: "+want, obs.Download.Content)
	data, err := os.ReadFile(want)
	require.NoError(t, err)
	assert.Equal(t, testPDF, string(data))

	// A click on a download link downloads too; numbering goes on.
	obs = gotoPage(t, b, base+"/download.html")
	link := bidOf(t, obs.Content, "link 'Download Test File'")
	obs = interact(t, b, fmt.Sprintf("click(%q)", link), false)
	require.NotNil(t, obs.Download, "content: %s", obs.Content)
	assert.Equal(t, filepath.Join(dir, "file_2.pdf"), obs.Download.Path)

	// A plain link whose answer is an attachment starts a navigation that
	// turns into a download; the name's extension is used when the bytes
	// say nothing.
	obs = gotoPage(t, b, base+"/download.html")
	link = bidOf(t, obs.Content, "link 'Attachment'")
	obs = interact(t, b, fmt.Sprintf("click(%q)", link), false)
	require.NotNil(t, obs.Download, "content: %s", obs.Content)
	assert.Equal(t, filepath.Join(dir, "file_3.bin"), obs.Download.Path)
	data, err = os.ReadFile(obs.Download.Path)
	require.NoError(t, err)
	assert.Equal(t, testAttachment, string(data))
}

func TestInteract_DownloadCopyGoesToTheFileOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving files away needs root")
	}
	base := serve(t)
	dir := t.TempDir()
	b := New(Options{WorkDir: dir, FileOwner: chown.To(1234, 2345), Logger: quietLogger()})
	t.Cleanup(func() { b.Close() })

	obs := interact(t, b, fmt.Sprintf("goto(%q)", base+"/doc.pdf"), false)
	require.NotNil(t, obs.Download, "content: %s", obs.Content)
	fi, err := os.Lstat(obs.Download.Path)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, []uint32{1234, 2345}, []uint32{st.Uid, st.Gid})
}

func TestInteract_ActionErrorsDoNotFailTheStep(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	gotoPage(t, b, base+"/form.html")

	tests := []struct {
		code string
		want string
	}{
		{`click("999")`, `ValueError: Could not find element with bid "999"`},
		{`click(12)`, `ValueError: expected a string, got 12`},
		{`fill("4")`, `TypeError: fill() missing 1 required positional argument: 'value'`},
		{`click("4", bogus=1)`, `TypeError: click() got an unexpected keyword argument 'bogus'`},
		{`new_tab(1)`, `TypeError: new_tab() takes 0 positional arguments but 1 was given`},
		{`launch_rockets()`, `NameError: Invalid action type 'launch_rockets'.`},
		{``, `ValueError: Received an empty action.`},
		{`click("4"`, `SyntaxError: expected ')' to close click( but the input ended (line 1, column 10)`},
		{`send_msg_to_user(5)`, `ValueError: Forbidden value: 5 is not a string`},
		{`press("4", "Nope")`, `Error: Unknown key: "Nope"`},
		{`fill("4", "x")`, `Error: Element is not an <input>, <textarea> or [contenteditable] element`},
	}
	for _, tt := range tests {
		obs := interact(t, b, tt.code, false)
		assert.True(t, obs.Error, tt.code)
		assert.Equal(t, tt.want, obs.LastBrowserActionError, tt.code)
		assert.Contains(t, obs.Content, "\n\n================ BEGIN error message ===============\nThe following error occurred when executing the last action:\n"+tt.want+"\n================ END error message ===============\nAccessibility tree of the COMPLETE webpage:\n", tt.code)
		assert.Equal(t, base+"/form.html", obs.URL, tt.code)
	}
}

func TestInteract_ActionsAfterAFailingOneDoNotRun(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	gotoPage(t, b, base+"/page1.html")

	obs := interact(t, b, fmt.Sprintf("click('nope')\ngoto(%q)", base+"/page2.html"), false)

	assert.True(t, obs.Error)
	assert.Equal(t, base+"/page1.html", obs.URL)
}

func TestInteract_ReturnAXTreeFillsObjects(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)

	obs := interact(t, b, fmt.Sprintf("goto(%q)", base+"/form.html"), true)

	require.False(t, obs.Error, obs.LastBrowserActionError)
	nodes, ok := obs.AXTreeObject["nodes"].([]any)
	require.True(t, ok)
	require.NotEmpty(t, nodes)
	button := bidOf(t, obs.Content, "button 'Test Button'")
	found := false
	for _, n := range nodes {
		if n.(map[string]any)["browsergym_id"] == button {
			found = true
		}
	}
	assert.True(t, found, "the button's node carries its bid")
	props, ok := obs.ExtraElementProperties[button].(map[string]any)
	require.True(t, ok)
	assert.Equal(t, true, props["clickable"])
	assert.Equal(t, 1.0, props["visibility"])
	assert.Len(t, props["bbox"], 4)
	assert.Equal(t, true, props["set_of_marks"])
}

func TestInteract_ClickInsideSameOriginIframe(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	obs := gotoPage(t, b, base+"/iframe.html")
	button := bidOf(t, obs.Content, "button 'Inner button'")
	assert.True(t, strings.HasPrefix(button, "a"), "bids inside the first iframe start with its bid: %s", button)

	obs = interact(t, b, fmt.Sprintf("click(%q)", button), false)

	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Contains(t, obs.Content, "button 'Inner clicked'")
}

func TestInteract_BidsStayStableAcrossSteps(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	first := gotoPage(t, b, base+"/form.html")

	second := interact(t, b, "noop(0)", false)

	assert.Equal(t, axElements(first.Content), axElements(second.Content))
}

func TestInteract_WidgetActions(t *testing.T) {
	base := serve(t)
	b, dir := newTestBrowser(t)
	upload := filepath.Join(dir, "upload_test.txt")
	require.NoError(t, os.WriteFile(upload, []byte("data"), 0o644))

	tests := []struct {
		name    string
		target  string // text that finds the element; "" for none
		code    string // %s is its bid
		want    string // text in the tree afterwards
		focused bool   // the element has the focus afterwards
	}{
		{"alert is dismissed", "button 'Alert me'", "click(%q)", "button 'after alert'", false},
		{"focus", "button 'Double me'", "focus(%q)", "button 'Double me'", true},
		{"message to the user", "", `send_msg_to_user("All done")`, "[Action executed successfully.]", false},
		{"report infeasible", "", `report_infeasible("No such button")`, "[Action executed successfully.]", false},
		{"double click", "button 'Double me'", "dblclick(%q)", "button 'double clicked'", false},
		{"hover", "StaticText 'Hover over me'", "hover(%q)", "StaticText 'hovered'", false},
		{"upload", "button 'Choose File'", "upload_file(%q, " + fmt.Sprintf("%q", upload) + ")", "StaticText 'File selected: upload_test.txt'", false},
		{"upload relative to the work dir", "button 'Choose File'", "upload_file(%q, 'upload_test.txt')", "StaticText 'File selected: upload_test.txt'", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := gotoPage(t, b, base+"/widgets.html")
			code, bid := tt.code, ""
			if tt.target != "" {
				bid = bidOfElement(t, obs.Content, tt.target)
				code = fmt.Sprintf(tt.code, bid)
			}
			obs = interact(t, b, code, false)
			require.False(t, obs.Error, obs.LastBrowserActionError)
			assert.Equal(t, code, obs.LastBrowserAction)
			assert.Contains(t, obs.Content, tt.want)
			if tt.focused {
				assert.Equal(t, bid, obs.FocusedElementBID)
				assert.Contains(t, obs.Content, "[Focused element bid: "+bid+"]\n")
			}
		})
	}
}

// bidOfElement finds the bid of the element that a line describes, or of its
// parent when the line is a text node without bid.
func bidOfElement(t *testing.T, content, text string) string {
	t.Helper()
	lines := strings.Split(content, "\n")
	for i, l := range lines {
		if !strings.Contains(l, text) {
			continue
		}
		for j := i; j >= 0; j-- {
			if m := bidLine.FindStringSubmatch(lines[j]); m != nil {
				return m[1]
			}
		}
	}
	require.Failf(t, "no element", "no element with %q in:\n%s", text, content)
	return ""
}

func TestInteract_DragAndDrop(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	obs := gotoPage(t, b, base+"/widgets.html")
	from := bidOfElement(t, obs.Content, "StaticText 'Drag me'")
	to := bidOfElement(t, obs.Content, "StaticText 'Drop here'")

	obs = interact(t, b, fmt.Sprintf("drag_and_drop(%q, %q)", from, to), false)

	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Contains(t, obs.Content, "StaticText 'dropped'")
}

func TestInteract_ScrollMovesThePage(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	obs := interact(t, b, fmt.Sprintf("goto(%q)", base+"/widgets.html"), true)
	heading := bidOf(t, obs.Content, "heading 'Widgets'")
	before := obs.ExtraElementProperties[heading].(map[string]any)["bbox"].([]float64)

	obs = interact(t, b, "scroll(0, 500)", true)

	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Equal(t, "scroll(0, 500)", obs.LastBrowserAction)
	after := obs.ExtraElementProperties[heading].(map[string]any)["bbox"].([]float64)
	assert.InDelta(t, before[1]-500, after[1], 1)
}

func TestInteract_LinkToNewPageOpensActiveTab(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	obs := gotoPage(t, b, base+"/widgets.html")
	link := bidOf(t, obs.Content, "link 'Open popup'")

	obs = interact(t, b, fmt.Sprintf("click(%q)", link), false)

	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Equal(t, []string{base + "/widgets.html", base + "/page2.html"}, obs.OpenPagesURLs)
	assert.Equal(t, 1, obs.ActivePageIndex)
	assert.Equal(t, base+"/page2.html", obs.URL)
}

func TestInteract_GotoThatNeverLoadsIsAnActionError(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	require.NoError(t, b.Start(stepCtx(t, 30*time.Second)))

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	obs, err := b.Interact(ctx, fmt.Sprintf("goto(%q)", base+"/slow.html"), false)

	require.NoError(t, err)
	assert.NoError(t, ctx.Err(), "the step must return before its deadline")
	assert.True(t, obs.Error)
	assert.Regexp(t, `^TimeoutError: Page.goto: Timeout \d+ms exceeded.$`, obs.LastBrowserActionError)
	assert.Contains(t, obs.Content, "heading 'Still loading'")
}

func TestNormalizeURL_GivesSchemes(t *testing.T) {
	tests := map[string]string{
		"http://localhost:8000": "http://localhost:8000",
		"https://x.org/a":       "https://x.org/a",
		"localhost:8000/a":      "http://localhost:8000/a",
		"example.com":           "http://example.com",
		"/tmp/a.html":           "file:///tmp/a.html",
		"file:///tmp/a.html":    "file:///tmp/a.html",
		"about:blank":           "about:blank",
		"data:text/html,hi":     "data:text/html,hi",
	}
	for in, want := range tests {
		assert.Equal(t, want, normalizeURL(in), in)
	}
}

func TestInteract_ClickWaitsForTheNavigationItStarted(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	obs := gotoPage(t, b, base+"/widgets.html")
	link := bidOf(t, obs.Content, "link 'Late link'")

	obs = interact(t, b, fmt.Sprintf("click(%q)", link), false)

	require.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Equal(t, base+"/late.html", obs.URL)
	assert.Contains(t, obs.Content, "heading 'Late page'")
}

func TestInteract_CanvasListedAsBrowserGymDoes(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)

	for _, code := range []string{fmt.Sprintf("goto(%q)", base+"/canvas.html"), "noop(0)"} {
		obs := interact(t, b, code, true)
		require.False(t, obs.Error, obs.LastBrowserActionError)
		// The board holds the canvas the script made; the described one
		// follows it.
		assert.Regexp(t, `\n\t\[\d+\] heading 'Drawing'\n\t\[\d+\] generic\n\t\t\[\d+\] Canvas ''\n\t\[\d+\] Canvas ''\n`, obs.Content, code)
		assert.NotContains(t, obs.Content, "browsergym_id_", code)

		var descs []any
		for _, n := range obs.AXTreeObject["nodes"].([]any) {
			node := n.(map[string]any)
			if node["role"].(map[string]any)["value"] != "Canvas" {
				continue
			}
			assert.NotEmpty(t, node["browsergym_id"], code)
			if d, ok := node["description"].(map[string]any); ok {
				descs = append(descs, d["value"])
			} else {
				descs = append(descs, nil)
			}
		}
		assert.ElementsMatch(t, []any{nil, "a chart"}, descs, "the bid is taken out of the description, the page's is kept: %s", code)
	}
}
