package acceptance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/testpdf"
)

// Ports of tests/runtime/test_browsing.py: BrowseURLAction and
// BrowseInteractiveAction against a real Chromium, pages served by a
// python3 http.server that a run action starts in the sandbox, and the
// file viewer whose address the agent reads from /tmp/oh-server-url.
//
// Upstream's http.server listens on every address of its container's
// network; the sandboxes here share the machine's network, so the same
// command also gets --bind 127.0.0.1. The workspace is /tmp/workspace
// where upstream's is /workspace: paths upstream spells out are built from
// rt.workspace().

// browserOutputFields are the dataclass fields of BrowserOutputObservation
// that observation_from_dict accepts as extras.
var browserOutputFields = []string{
	"url", "trigger_by_action", "screenshot", "screenshot_path", "set_of_marks", "error",
	"goal_image_urls", "open_pages_urls", "active_page_index", "dom_object", "axtree_object",
	"extra_element_properties", "last_browser_action", "last_browser_action_error",
	"focused_element_bid", "filter_visible_only",
}

// browserOutput is what the tests read of a BrowserOutputObservation.
type browserOutput struct {
	URL                    string   `json:"url"`
	TriggerByAction        string   `json:"trigger_by_action"`
	ScreenshotPath         *string  `json:"screenshot_path"`
	Error                  bool     `json:"error"`
	OpenPagesURLs          []string `json:"open_pages_urls"`
	ActivePageIndex        int      `json:"active_page_index"`
	LastBrowserAction      string   `json:"last_browser_action"`
	LastBrowserActionError string   `json:"last_browser_action_error"`
	FocusedElementBID      string   `json:"focused_element_bid"`
}

type browseURLArgs struct {
	URL          string `json:"url"`
	Thought      string `json:"thought"`
	SecurityRisk int    `json:"security_risk"`
	ReturnAXTree bool   `json:"return_axtree"`
}

type browseInteractiveArgs struct {
	BrowserActions          string `json:"browser_actions"`
	Thought                 string `json:"thought"`
	BrowsergymSendMsgToUser string `json:"browsergym_send_msg_to_user"`
	SecurityRisk            int    `json:"security_risk"`
	ReturnAXTree            bool   `json:"return_axtree"`
}

// browse sends BrowseURLAction(url, return_axtree=returnAXTree).
func (r *runtime) browse(url string, returnAXTree bool) *observation {
	r.t.Helper()
	o, err := r.execute(actionDict{
		Message: "I am browsing the URL: " + url,
		Action:  "browse",
		Args:    browseURLArgs{URL: url, SecurityRisk: -1, ReturnAXTree: returnAXTree},
		Timeout: sandboxTimeout,
	}, false)
	if err != nil {
		r.t.Fatalf("browse %s: %v", url, err)
	}
	return o
}

// browseInteractive sends BrowseInteractiveAction(browser_actions=actions,
// return_axtree=returnAXTree).
func (r *runtime) browseInteractive(actions string, returnAXTree bool) *observation {
	r.t.Helper()
	o, err := r.execute(actionDict{
		Message: "I am interacting with the browser:\n```\n" + actions + "\n```",
		Action:  "browse_interactive",
		Args:    browseInteractiveArgs{BrowserActions: actions, SecurityRisk: -1, ReturnAXTree: returnAXTree},
		Timeout: sandboxTimeout,
	}, false)
	if err != nil {
		r.t.Fatalf("browse_interactive %q: %v", actions, err)
	}
	return o
}

// mustBeBrowse is upstream's isinstance(obs, BrowserOutputObservation).
func (o *observation) mustBeBrowse() browserOutput {
	o.r.t.Helper()
	if o.Kind != "browse" {
		o.r.t.Fatalf("upstream expects a BrowserOutputObservation, got %q; %v", o.Kind, o)
	}
	return o.Browser
}

// str is Python's str(obs) for the observations these tests print.
func (o *observation) str() string {
	switch o.Kind {
	case "browse":
		b := o.Browser
		var s strings.Builder
		s.WriteString("**BrowserOutputObservation**\n")
		fmt.Fprintf(&s, "URL: %s\n", b.URL)
		fmt.Fprintf(&s, "Error: %s\n", pyBool(b.Error))
		fmt.Fprintf(&s, "Open pages: %s\n", pyStrList(b.OpenPagesURLs))
		fmt.Fprintf(&s, "Active page index: %d\n", b.ActivePageIndex)
		fmt.Fprintf(&s, "Last browser action: %s\n", b.LastBrowserAction)
		fmt.Fprintf(&s, "Last browser action error: %s\n", b.LastBrowserActionError)
		fmt.Fprintf(&s, "Focused element bid: %s\n", b.FocusedElementBID)
		if b.ScreenshotPath != nil && *b.ScreenshotPath != "" {
			fmt.Fprintf(&s, "Screenshot saved to: %s\n", *b.ScreenshotPath)
		}
		s.WriteString("--- Agent Observation ---\n")
		s.WriteString(o.Content)
		return s.String()
	case "download":
		return "**FileDownloadObservation**\nLocation of downloaded file: " + o.FilePath + "\n"
	}
	return o.Content
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// pyStrList is repr() of a list of str, for strings without quotes or
// backslashes (URLs).
func pyStrList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = "'" + s + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// shortBrowseBody is the answer with its base64 screenshots cut, for
// failure messages.
func shortBrowseBody(data []byte) string {
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return string(data)
	}
	if ex, ok := m["extras"].(map[string]any); ok {
		for _, k := range []string{"screenshot", "set_of_marks"} {
			if s, ok := ex[k].(string); ok && len(s) > 40 {
				ex[k] = fmt.Sprintf("%s... (%d chars)", s[:40], len(s))
			}
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return string(data)
	}
	return string(out)
}

// axtreeElement is one "[bid] description" entry of the accessibility
// tree in an observation's content.
type axtreeElement struct{ bid, desc string }

// axtree is the suite's parse_axtree_content: bid -> description, in the
// order of a Python dict (first insertion fixes the position, a later one
// the value).
type axtree struct {
	order []string
	desc  map[string]string
}

var bidLine = regexp.MustCompile(`^\[([a-zA-Z0-9]+)\]\s*(.*)`)

func parseAxtreeContent(content string) axtree {
	tree := axtree{desc: map[string]string{}}
	put := func(bid string, lines []string) {
		if _, ok := tree.desc[bid]; !ok {
			tree.order = append(tree.order, bid)
		}
		tree.desc[bid] = strings.Join(lines, " ")
	}
	var current string
	var lines []string
	inAxtree := false
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(line)
		if strings.Contains(line, "BEGIN accessibility tree") {
			inAxtree = true
			continue
		} else if strings.Contains(line, "END accessibility tree") {
			break
		}
		if !inAxtree || line == "" {
			continue
		}
		if m := bidLine.FindStringSubmatch(line); m != nil {
			if current != "" && len(lines) > 0 {
				put(current, lines)
			}
			current, lines = m[1], []string{strings.TrimSpace(m[2])}
		} else if current != "" {
			lines = append(lines, line)
		}
	}
	if current != "" && len(lines) > 0 {
		put(current, lines)
	}
	return tree
}

// byText is find_element_by_text: the first element whose description
// contains text, case-insensitively; "" for None.
func (a axtree) byText(text string) string {
	text = strings.ToLower(strings.TrimSpace(text))
	for _, bid := range a.order {
		if strings.Contains(strings.ToLower(a.desc[bid]), text) {
			return bid
		}
	}
	return ""
}

// byID is find_element_by_id.
func (a axtree) byID(id string) string {
	for _, bid := range a.order {
		d := a.desc[bid]
		if strings.Contains(d, `id="`+id+`"`) || strings.Contains(d, `id='`+id+`'`) {
			return bid
		}
	}
	return ""
}

// first returns up to n elements, for failure messages as upstream's
// dict(list(axtree_elements.items())[:n]).
func (a axtree) first(n int) []axtreeElement {
	var out []axtreeElement
	for _, bid := range a.order {
		if len(out) == n {
			break
		}
		out = append(out, axtreeElement{bid, a.desc[bid]})
	}
	return out
}

func (a axtree) has(bid string) bool {
	_, ok := a.desc[bid]
	return ok
}

// httpServerCmd is upstream's command that serves the workspace (see the
// top of this file for --bind).
func httpServerCmd(port int) string {
	return fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1 > server.log 2>&1 &", port)
}

// serveWorkspace starts the http.server and waits for it as upstream's
// tests do (a run action, then sleep 3).
func serveWorkspace(t *testing.T, rt *runtime, port int) {
	t.Helper()
	obs := rt.run(run(httpServerCmd(port)))
	require.Equal(t, 0, obs.exitCode(), obs)
	rt.run(run("sleep 3"))
}

// copyHostFile writes content to name in a host directory and copies it
// into the workspace with copy_to, as upstream's tests do with temp_dir.
func copyHostFile(t *testing.T, rt *runtime, name string, content []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, content, 0o644))
	require.NoError(t, rt.copyTo(p, rt.workspace(), false))
}

// test_browser_disabled
func TestBrowserDisabled(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{enableBrowser: false})
		port := freePort(t)
		rt.run(run(httpServerCmd(port)))

		obs := rt.browse(fmt.Sprintf("http://localhost:%d", port), false)
		assert.Equal(t, "error", obs.Kind, "upstream expects an ErrorObservation; %v", obs)
		assert.Contains(t, obs.Content, "Browser functionality is not supported or disabled", obs)
	})
}

// test_simple_browse
func TestSimpleBrowse(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{enableBrowser: true})
		port := freePort(t)

		obs := rt.run(run(httpServerCmd(port)))
		assert.Equal(t, "run", obs.Kind, obs)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "[1]", obs)

		obs = rt.run(run("sleep 3 && cat server.log"))
		assert.Equal(t, 0, obs.exitCode(), obs)

		url := fmt.Sprintf("http://localhost:%d", port)
		obs = rt.browse(url, false)
		b := obs.mustBeBrowse()
		assert.Contains(t, b.URL, url, obs)
		assert.False(t, b.Error, obs)
		assert.Equal(t, []string{url + "/"}, b.OpenPagesURLs, obs)
		assert.Equal(t, 0, b.ActivePageIndex, obs)
		assert.Equal(t, `goto("`+url+`")`, b.LastBrowserAction, obs)
		assert.Equal(t, "", b.LastBrowserActionError, obs)
		assert.Contains(t, obs.Content, "Directory listing for /", obs)
		assert.Contains(t, obs.Content, "server.log", obs)

		obs = rt.run(run("rm -rf server.log"))
		assert.Equal(t, 0, obs.exitCode(), obs)
	})
}

// test_browser_navigation_actions: goto, noop, go_back, go_forward.
func TestBrowserNavigationActions(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{enableBrowser: true})
		copyHostFile(t, rt, "page1.html", []byte(`
        <!DOCTYPE html>
        <html>
        <head><title>Page 1</title></head>
        <body>
            <h1>Page 1</h1>
            <a href="page2.html" id="link-to-page2">Go to Page 2</a>
        </body>
        </html>
        `))
		copyHostFile(t, rt, "page2.html", []byte(`
        <!DOCTYPE html>
        <html>
        <head><title>Page 2</title></head>
        <body>
            <h1>Page 2</h1>
            <a href="page1.html" id="link-to-page1">Go to Page 1</a>
        </body>
        </html>
        `))
		port := freePort(t)
		serveWorkspace(t, rt, port)
		page1 := fmt.Sprintf("http://localhost:%d/page1.html", port)
		page2 := fmt.Sprintf("http://localhost:%d/page2.html", port)

		for _, step := range []struct{ actions, text, url string }{
			{`goto("` + page1 + `")`, "Page 1", page1},
			{"noop(500)", "Page 1", page1}, // the page stays
			{`goto("` + page2 + `")`, "Page 2", page2},
			{"go_back()", "Page 1", page1},
			{"go_forward()", "Page 2", page2},
		} {
			obs := rt.browseInteractive(step.actions, false)
			b := obs.mustBeBrowse()
			assert.False(t, b.Error, "%s: %v", step.actions, obs)
			assert.Contains(t, obs.Content, step.text, "%s: %v", step.actions, obs)
			assert.Contains(t, b.URL, step.url, "%s: %v", step.actions, obs)
		}

		rt.run(run(`pkill -f "python3 -m http.server" || true`))
	})
}

// test_browser_form_interactions: fill, select_option, click and clear
// on bids read from the accessibility tree.
func TestBrowserFormInteractions(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{enableBrowser: true})
		copyHostFile(t, rt, "form.html", []byte(`
        <!DOCTYPE html>
        <html>
        <head><title>Test Form</title></head>
        <body>
            <h1>Test Form</h1>
            <form id="test-form">
                <input type="text" id="text-input" name="text" placeholder="Enter text">
                <textarea id="textarea-input" name="message" placeholder="Enter message"></textarea>
                <select id="select-input" name="option">
                    <option value="">Select an option</option>
                    <option value="option1">Option 1</option>
                    <option value="option2">Option 2</option>
                    <option value="option3">Option 3</option>
                </select>
                <button type="button" id="test-button">Test Button</button>
                <input type="submit" id="submit-button" value="Submit">
            </form>
            <div id="result"></div>
            <script>
                document.getElementById('test-button').onclick = function() {
                    document.getElementById('result').innerHTML = 'Button clicked!';
                };
            </script>
        </body>
        </html>
        `))
		port := freePort(t)
		serveWorkspace(t, rt, port)

		obs := rt.browseInteractive(fmt.Sprintf(`goto("http://localhost:%d/form.html")`, port), true)
		b := obs.mustBeBrowse()
		require.False(t, b.Error, obs)
		require.Contains(t, obs.Content, "Test Form", obs)

		tree := parseAxtreeContent(obs.Content)
		textInput := tree.byText("Enter text")
		textarea := tree.byText("Enter message")
		sel := tree.byText("combobox")
		button := tree.byText("Test Button")
		require.NotEmpty(t, textInput, "Could not find text input element in axtree. Available elements: %v", tree.first(5))
		require.NotEmpty(t, textarea, "Could not find textarea element in axtree. Available elements: %v", tree.first(5))
		require.NotEmpty(t, button, "Could not find button element in axtree. Available elements: %v", tree.first(5))
		require.NotEmpty(t, sel, "Could not find select element in axtree. Available elements: %v", tree.first(5))
		require.NotEqual(t, textInput, button, "Text input bid should be different from button bid")

		obs = rt.browseInteractive(fmt.Sprintf("fill(%q, \"Hello World\")\nfill(%q, \"This is a test message\")", textInput, textarea), true)
		b = obs.mustBeBrowse()
		require.False(t, b.Error, "Browser action failed with error: %s", b.LastBrowserActionError)
		tree = parseAxtreeContent(obs.Content)
		require.True(t, tree.has(textInput), "Text input element %s should be present in updated axtree: %v", textInput, tree.order)
		assert.Contains(t, tree.desc[textInput], "Hello World")
		require.True(t, tree.has(textarea), "Textarea element %s should be present in updated axtree: %v", textarea, tree.order)
		assert.Contains(t, tree.desc[textarea], "This is a test message")

		obs = rt.browseInteractive(fmt.Sprintf("select_option(%q, \"option2\")", sel), true)
		b = obs.mustBeBrowse()
		require.False(t, b.Error, "Select option action failed: %s", b.LastBrowserActionError)
		tree = parseAxtreeContent(obs.Content)
		require.True(t, tree.has(sel), "Select element %s should be present in updated axtree: %v", sel, tree.order)
		selDesc := tree.desc[sel]
		assert.True(t, strings.Contains(selDesc, "option2") || strings.Contains(selDesc, "Option 2"),
			"Select element should show 'option2' as selected but description is: %s", selDesc)

		obs = rt.browseInteractive(fmt.Sprintf("click(%q)", button), true)
		b = obs.mustBeBrowse()
		require.False(t, b.Error, "Click action failed: %s", b.LastBrowserActionError)
		tree = parseAxtreeContent(obs.Content)
		found := false
		for _, d := range tree.desc {
			found = found || strings.Contains(d, "Button clicked!")
		}
		assert.True(t, found, "Button click should have triggered JavaScript to show 'Button clicked!' but not found in: %v", tree.first(10))

		obs = rt.browseInteractive(fmt.Sprintf("clear(%q)", textInput), true)
		b = obs.mustBeBrowse()
		require.False(t, b.Error, "Clear action failed: %s", b.LastBrowserActionError)
		tree = parseAxtreeContent(obs.Content)
		require.True(t, tree.has(textInput))
		desc := tree.desc[textInput]
		assert.NotContains(t, desc, "Hello World", "Text input should be cleared")
		assert.True(t, strings.Contains(desc, "Enter text") || strings.Contains(strings.ToLower(desc), "textbox") || strings.TrimSpace(desc) == "",
			"Cleared text input should show placeholder or be empty but description is: %s", desc)

		rt.run(run(`pkill -f "python3 -m http.server" || true`))
	})
}

// test_browser_interactive_actions: scroll, hover, focus, fill, press and
// several actions in one step.
func TestBrowserInteractiveActions(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{enableBrowser: true})
		copyHostFile(t, rt, "scroll.html", []byte(`
        <!DOCTYPE html>
        <html>
        <head>
            <title>Scroll Test</title>
            <style>
                body { margin: 0; padding: 20px; }
                .content { height: 2000px; background: linear-gradient(to bottom, #ff0000, #0000ff); }
                .hover-target {
                    width: 200px; height: 100px; background: #ccc; margin: 20px;
                    border: 2px solid #000; cursor: pointer;
                }
                .hover-target:hover { background: #ffff00; }
                #focus-input { margin: 20px; padding: 10px; font-size: 16px; }
            </style>
        </head>
        <body>
            <h1>Interactive Test Page</h1>
            <div class="hover-target" id="hover-div">Hover over me</div>
            <input type="text" id="focus-input" placeholder="Focus me and type">
            <div class="content">
                <p>This is a long scrollable page...</p>
                <p style="margin-top: 500px;">Middle content</p>
                <p style="margin-top: 500px;" id="bottom-content">Bottom content</p>
            </div>
        </body>
        </html>
        `))
		port := freePort(t)
		serveWorkspace(t, rt, port)

		obs := rt.browseInteractive(fmt.Sprintf(`goto("http://localhost:%d/scroll.html")`, port), true)
		b := obs.mustBeBrowse()
		require.False(t, b.Error, obs)
		require.Contains(t, obs.Content, "Interactive Test Page", obs)

		obs = rt.browseInteractive("scroll(0, 300)", true)
		b = obs.mustBeBrowse()
		require.False(t, b.Error, "Scroll action failed: %s", b.LastBrowserActionError)
		assert.Contains(t, b.LastBrowserAction, "scroll(0, 300)")

		tree := parseAxtreeContent(obs.Content)
		hoverDiv := tree.byText("Hover over me")
		focusInput := tree.byText("Focus me and type")
		require.NotEmpty(t, hoverDiv, "Could not find hover div element in axtree. Available elements: %v", tree.first(5))
		require.NotEmpty(t, focusInput, "Could not find focus input element in axtree. Available elements: %v", tree.first(5))

		obs = rt.browseInteractive(fmt.Sprintf("hover(%q)", hoverDiv), true)
		b = obs.mustBeBrowse()
		require.False(t, b.Error, "Hover action failed: %s", b.LastBrowserActionError)

		obs = rt.browseInteractive(fmt.Sprintf("focus(%q)", focusInput), true)
		b = obs.mustBeBrowse()
		require.False(t, b.Error, "Focus action failed: %s", b.LastBrowserActionError)
		assert.Equal(t, focusInput, b.FocusedElementBID, "the focused element")

		obs = rt.browseInteractive(fmt.Sprintf("fill(%q, \"TestValue123\")", focusInput), true)
		b = obs.mustBeBrowse()
		require.False(t, b.Error, "Fill action failed: %s", b.LastBrowserActionError)
		tree = parseAxtreeContent(obs.Content)
		require.True(t, tree.has(focusInput), "Focus input element %s should be present in updated axtree: %v", focusInput, tree.order)
		assert.Contains(t, tree.desc[focusInput], "TestValue123")

		obs = rt.browseInteractive(fmt.Sprintf("press(%q, \"Backspace\")", focusInput), true)
		b = obs.mustBeBrowse()
		require.False(t, b.Error, "Press action failed: %s", b.LastBrowserActionError)
		tree = parseAxtreeContent(obs.Content)
		require.True(t, tree.has(focusInput), "Focus input element %s should be present in updated axtree: %v", focusInput, tree.order)
		assert.Contains(t, tree.desc[focusInput], "TestValue12", "after Backspace")

		obs = rt.browseInteractive("scroll(0, -200)\nnoop(1000)\nscroll(0, 400)", false)
		b = obs.mustBeBrowse()
		require.False(t, b.Error, "Multiple actions sequence failed: %s", b.LastBrowserActionError)
		assert.True(t, strings.Contains(b.LastBrowserAction, "scroll(0, 400)") || strings.Contains(b.LastBrowserAction, "noop(1000)"),
			"Expected final action from sequence but got: %s", b.LastBrowserAction)

		rt.run(run(`pkill -f "python3 -m http.server" || true`))
	})
}

// test_browser_file_upload: upload_file on the file input, then a click
// that makes the page show the chosen file.
func TestBrowserFileUpload(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{enableBrowser: true})
		copyHostFile(t, rt, "upload.html", []byte(`
        <!DOCTYPE html>
        <html>
        <head><title>File Upload Test</title></head>
        <body>
            <h1>File Upload Test</h1>
            <form enctype="multipart/form-data">
                <input type="file" id="file-input" name="file" accept=".txt,.pdf,.png">
                <button type="button" onclick="handleUpload()">Upload File</button>
            </form>
            <div id="upload-result"></div>
            <script>
                function handleUpload() {
                    const fileInput = document.getElementById('file-input');
                    if (fileInput.files.length > 0) {
                        document.getElementById('upload-result').innerHTML =
                            'File selected: ' + fileInput.files[0].name;
                    } else {
                        document.getElementById('upload-result').innerHTML = 'No file selected';
                    }
                }
            </script>
        </body>
        </html>
        `))
		copyHostFile(t, rt, "upload_test.txt", []byte("This is a test file for upload testing."))
		port := freePort(t)
		serveWorkspace(t, rt, port)

		obs := rt.browseInteractive(fmt.Sprintf(`goto("http://localhost:%d/upload.html")`, port), true)
		b := obs.mustBeBrowse()
		require.False(t, b.Error, obs)
		require.Contains(t, obs.Content, "File Upload Test", obs)

		tree := parseAxtreeContent(obs.Content)
		fileInput := tree.byText("Choose File")
		for _, alt := range []func() string{
			func() string { return tree.byText("No file chosen") },
			func() string { return tree.byText("Browse") },
			func() string { return tree.byText("file") },
			func() string { return tree.byID("file-input") },
		} {
			if fileInput == "" {
				fileInput = alt()
			}
		}
		uploadButton := tree.byText("Upload File")
		require.NotEmpty(t, fileInput, "Could not find file input element in axtree. Available elements: %v", tree.first(10))

		obs = rt.browseInteractive(fmt.Sprintf("upload_file(%q, %q)", fileInput, filepath.Join(rt.workspace(), "upload_test.txt")), true)
		b = obs.mustBeBrowse()
		require.False(t, b.Error, "File upload action failed: %s", b.LastBrowserActionError)
		tree = parseAxtreeContent(obs.Content)
		require.True(t, tree.has(fileInput), "File input element %s should be present in updated axtree: %v", fileInput, tree.order)
		desc := tree.desc[fileInput]
		assert.True(t, strings.Contains(desc, "upload_test.txt") || strings.Contains(desc, "upload_test") || strings.Contains(desc, "txt"),
			"File input should show selected file but description is: %s", desc)

		if uploadButton != "" {
			obs = rt.browseInteractive(fmt.Sprintf("click(%q)", uploadButton), true)
			b = obs.mustBeBrowse()
			require.False(t, b.Error, "Upload button click failed: %s", b.LastBrowserActionError)
			tree = parseAxtreeContent(obs.Content)
			found := false
			for _, d := range tree.desc {
				found = found || strings.Contains(d, "File selected:") || strings.Contains(d, "upload_test.txt")
			}
			assert.True(t, found, "JavaScript upload handler should have updated the page but no result found in: %v", tree.first(10))
		}

		rt.run(run(`pkill -f "python3 -m http.server" || true`))
	})
}

// viewInFileViewer is the part the PDF and PNG tests share: the file is in
// the workspace, the agent reads the viewer's address from
// /tmp/oh-server-url and goes to <url>/view?path=<file>.
func viewInFileViewer(t *testing.T, rt *runtime, name string) *observation {
	t.Helper()
	obs := rt.run(run("ls -alh"))
	require.Equal(t, "run", obs.Kind, obs)
	require.Equal(t, 0, obs.exitCode(), obs)
	require.Contains(t, obs.Content, name, obs)

	obs = rt.run(run("cat /tmp/oh-server-url"))
	require.Equal(t, 0, obs.exitCode(), obs)
	serverURL := strings.TrimSpace(obs.Content)

	obs = rt.browseInteractive(`goto("`+serverURL+"/view?path="+filepath.Join(rt.workspace(), name)+`")`, false)
	obs.mustBeBrowse()
	return obs
}

// checkScreenshotSaved is the end of the PDF and PNG tests: the
// observation names a screenshot under <workspace>/.browser_screenshots,
// and the file is there.
func checkScreenshotSaved(t *testing.T, rt *runtime, text string) {
	t.Helper()
	assert.Contains(t, text, "Screenshot saved to: "+rt.workspace()+"/.browser_screenshots/screenshot_")
	obs := rt.run(run("ls " + rt.workspace() + "/.browser_screenshots"))
	require.Equal(t, "run", obs.Kind, obs)
	assert.Equal(t, 0, obs.exitCode(), obs)
	assert.Contains(t, obs.Content, "screenshot_", obs)
	assert.Contains(t, obs.Content, ".png", obs)
}

// test_read_pdf_browse. Upstream draws the PDF with reportlab; this one
// is written by hand with the same three lines of text, uncompressed.
//
// The viewer's page draws PDFs with pdf.js: Debian's libjs-pdf, which
// the viewer serves itself where it is installed, else pdf.js from the
// public CDN that upstream's viewer uses. Upstream's "Canvas" (the pages
// pdf.js draws) is checked whenever libjs-pdf is installed. Without it,
// where the page could not load pdf.js from the CDN it says so
// ("pdfjsLib is not defined"), and this test skips that one check, last,
// after all the others have run.
func TestReadPDFBrowse(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{enableBrowser: true})
		copyHostFile(t, rt, "test_document.pdf", testpdf.Pages(
			"This is test content for PDF reading test\n"+
				"Additional line for PDF structure\n"+
				"Third line to ensure valid PDF"))

		obs := viewInFileViewer(t, rt, "test_document.pdf")
		text := obs.str()
		assert.Contains(t, text, "[Action executed successfully.]", obs)
		assert.Contains(t, text, "File Viewer - test_document.pdf", obs) // this port's
		checkScreenshotSaved(t, rt, text)

		if !localPDFJS() && strings.Contains(obs.Content, "pdfjsLib is not defined") {
			t.Skipf("not checked: upstream's %q needs pdf.js, from Debian's libjs-pdf (not installed) or from the CDN, which this machine cannot reach (the page says %q)",
				"Canvas", "pdfjsLib is not defined")
		}
		assert.Contains(t, text, "Canvas", obs)
	})
}

// localPDFJS tells whether Debian's libjs-pdf is installed, whose pdf.js
// the file viewer serves itself. The sandboxes see this machine's /usr.
func localPDFJS() bool {
	for _, f := range []string{"pdf.js", "pdf.min.js"} {
		if _, err := os.Stat("/usr/share/javascript/pdf/build/" + f); err == nil {
			return true
		}
	}
	return false
}

// test_read_png_browse. Upstream draws a line of text with PIL; only the
// page's title is checked, so a plain drawing does.
func TestReadPNGBrowse(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{enableBrowser: true})
		copyHostFile(t, rt, "test_image.png", testPNG(t))

		obs := viewInFileViewer(t, rt, "test_image.png")
		text := obs.str()
		assert.Contains(t, text, "[Action executed successfully.]", obs)
		assert.Contains(t, text, "File Viewer - test_image.png", obs)
		checkScreenshotSaved(t, rt, text)
	})
}

// test_download_file (skipped upstream as flaky). Going to a PDF makes the
// browser download it; the server copies it to <workspace>/file_1.pdf and
// answers with a download observation.
//
// Upstream browses http://localhost:<port>/ and then expects the URL to
// contain download_test.html and the page to say "Download Test Page":
// python's http.server answers / with a directory listing, so no server
// could pass that. This port browses the page itself, which is what those
// two checks are about.
func TestDownloadFile(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{enableBrowser: true})
		ws := rt.workspace()
		// Upstream's minimal PDF, with the indentation its source gives it.
		pdf := "%PDF-1.4\n        1 0 obj\n\n        /Type /Catalog\n        /Pages 2 0 R\n        >>\n        endobj\n" +
			"        2 0 obj\n\n        /Type /Pages\n        /Kids [3 0 R]\n        /Count 1\n        >>\n        endobj\n" +
			"        3 0 obj\n\n        /Type /Page\n        /Parent 2 0 R\n        /MediaBox [0 0 612 792]\n        >>\n        endobj\n" +
			"        xref\n        0 4\n        0000000000 65535 f\n        0000000010 00000 n\n        0000000053 00000 n\n" +
			"        0000000125 00000 n\n        trailer\n\n        /Size 4\n        /Root 1 0 R\n        >>\n        startxref\n        212\n        %%EOF"
		const testFileName = "test_download.pdf"
		copyHostFile(t, rt, testFileName, []byte(pdf))
		copyHostFile(t, rt, "download_test.html", []byte(`
        <!DOCTYPE html>
        <html>
        <head>
            <title>Download Test</title>
        </head>
        <body>
            <h1>Download Test Page</h1>
            <p>Click the link below to download the test file:</p>
            <a href="/`+testFileName+`" download="`+testFileName+`" id="download-link">Download Test File</a>
        </body>
        </html>
        `))

		obs := rt.run(run("ls -alh"))
		require.Equal(t, "run", obs.Kind, obs)
		require.Equal(t, 0, obs.exitCode(), obs)
		require.Contains(t, obs.Content, testFileName, obs)
		require.Contains(t, obs.Content, "download_test.html", obs)

		obs = rt.run(run("mkdir -p " + ws + "/.downloads"))
		require.Equal(t, 0, obs.exitCode(), obs)

		port := freePort(t)
		obs = rt.run(run(httpServerCmd(port)))
		require.Equal(t, "run", obs.Kind, obs)
		require.Equal(t, 0, obs.exitCode(), obs)
		rt.run(run("sleep 2"))

		obs = rt.browse(fmt.Sprintf("http://localhost:%d/download_test.html", port), false)
		b := obs.mustBeBrowse()
		assert.Contains(t, b.URL, fmt.Sprintf("http://localhost:%d/download_test.html", port), obs)
		assert.False(t, b.Error, obs)
		assert.Contains(t, obs.Content, "Download Test Page", obs)

		obs = rt.browseInteractive(fmt.Sprintf(`goto("http://localhost:%d/%s")`, port, testFileName), false)
		const downloadedFileName = "file_1.pdf"
		require.Equal(t, "download", obs.Kind, "upstream expects a FileDownloadObservation; %v", obs)
		assert.Contains(t, obs.str(), "Location of downloaded file:", obs)
		assert.Contains(t, obs.str(), downloadedFileName, obs) // renamed
		// The contract's exact texts, which upstream does not check.
		assert.Equal(t, filepath.Join(ws, downloadedFileName), obs.FilePath, obs)
		assert.Equal(t, fmt.Sprintf("Execution of the previous action goto(\"http://localhost:%d/%s\") resulted in a file download. The downloaded file is saved at location: %s",
			port, testFileName, filepath.Join(ws, downloadedFileName)), obs.Content, obs)

		rt.run(run("sleep 3"))
		obs = rt.run(run("ls -la " + ws))
		require.Equal(t, "run", obs.Kind, obs)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, downloadedFileName, obs)
		// This port's own check: the copy is the file that was served.
		got, err := os.ReadFile(rt.hostPath(filepath.Join(ws, downloadedFileName)))
		require.NoError(t, err)
		assert.Equal(t, pdf, string(got))

		rt.run(run(`pkill -f "python3 -m http.server" || true`))
		rt.run(run("rm -f server.log"))
	})
}

// testPNG is a 400x200 white image with a black bar where upstream's has
// its line of text.
func testPNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 400, 200))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(img, image.Rect(20, 80, 220, 92), image.NewUniform(color.Black), image.Point{}, draw.Src)
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// test_browsergym_envs.py::test_browsergym_eval_env runs a miniwob task
// (browsergym/miniwob.choose-list) in an evaluation image with the
// browsergym-miniwob package and the task pages; upstream skips it where
// that package is missing. The server takes --browsergym-eval-env but has
// no BrowserGym task environments.
func TestBrowsergymEvalEnv(t *testing.T) {
	t.Skip("not ported: needs the miniwob evaluation image (browsergym-miniwob and its task pages), which upstream also skips without")
}
