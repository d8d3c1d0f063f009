package browser

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pages served to the browser in the tests.
var testPages = map[string]string{
	"/links.html": `<!DOCTYPE html><html><head><title>Links</title></head><body>
<h1>Hello Markdown</h1><p>Some <b>bold</b> text.</p>
<ul><li><a href="/page2.html">Second page</a></li><li>plain item</li></ul>
<img src="/nothing.png" alt="picture"></body></html>`,
	"/page1.html": `<!DOCTYPE html><html><head><title>Page 1</title></head><body><h1>Page 1</h1><a href="page2.html" id="l">Go to Page 2</a></body></html>`,
	"/page2.html": `<!DOCTYPE html><html><head><title>Page 2</title></head><body><h1>Page 2</h1><a href="page1.html">Go to Page 1</a></body></html>`,
	"/form.html": `<!DOCTYPE html><html><head><title>Test Form</title></head><body>
<h1>Test Form</h1>
<form id="f" action="/submitted.html" method="get">
<input type="text" id="text-input" name="text" placeholder="Enter text">
<textarea id="ta" name="message" placeholder="Enter message"></textarea>
<select id="sel" name="option">
<option value="">Select an option</option>
<option value="option1">Option 1</option>
<option value="option2">Option 2</option>
</select>
<button type="button" id="test-button">Test Button</button>
</form>
<div id="result"></div>
<script>document.getElementById('test-button').onclick = function() { document.getElementById('result').innerHTML = 'Button clicked!'; };</script>
</body></html>`,
	"/submitted.html": `<!DOCTYPE html><html><head><title>Submitted</title></head><body><h1>Form submitted</h1><p id="q"></p><script>document.getElementById('q').textContent = 'query ' + location.search;</script></body></html>`,
	"/download.html":  `<!DOCTYPE html><html><body><h1>Download Test Page</h1><a href="/doc.pdf" download="doc.pdf">Download Test File</a><a href="/data.bin">Attachment</a></body></html>`,
	"/iframe.html":    `<!DOCTYPE html><html><body><h1>Outer</h1><iframe src="/inner.html"></iframe></body></html>`,
	"/widgets.html": `<!DOCTYPE html><html><head><title>Widgets</title></head><body>
<h1>Widgets</h1>
<button onclick="alert('hi'); this.textContent='after alert'">Alert me</button>
<button ondblclick="this.textContent='double clicked'">Double me</button>
<div onmouseover="this.textContent='hovered'" style="width:200px;height:40px">Hover over me</div>
<a href="/page2.html" target="_blank">Open popup</a>
<a href="/late.html">Late link</a>
<div draggable="true" ondragstart="event.dataTransfer.setData('text/plain', 'x')" style="width:120px;height:40px">Drag me</div>
<div ondragover="event.preventDefault()" ondrop="event.preventDefault(); this.textContent='dropped'" style="width:120px;height:40px">Drop here</div>
<input type="file" onchange="document.getElementById('fname').textContent = 'File selected: ' + this.files[0].name">
<p id="fname">No file yet</p>
<div style="height:3000px">tall</div>
<p>Bottom</p>
</body></html>`,
	// A canvas made by a script, which Chromium leaves out of the tree
	// unless something makes it interesting, and one the page describes.
	"/canvas.html": `<!DOCTYPE html><html><head><title>Canvas</title></head><body>
<h1>Drawing</h1>
<div id="board"></div>
<canvas aria-description="a chart"></canvas>
<script>document.getElementById('board').appendChild(document.createElement('canvas'));</script>
</body></html>`,
	"/inner.html": `<!DOCTYPE html><html><body><button onclick="this.textContent='Inner clicked'">Inner button</button></body></html>`,
}

const testPDF = "%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"

// testAttachment is content whose bytes give no type away.
const testAttachment = "\x00\x01raw bytes\xff\xfe"

// serve starts a loopback HTTP server with the test pages.
func serve(t *testing.T) string {
	t.Helper()
	return serveTB(t)
}

func serveTB(t testing.TB) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if body, ok := testPages[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
			return
		}
		http.NotFound(w, r)
	})
	mux.HandleFunc("/doc.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		io.WriteString(w, testPDF)
	})
	// A plain link to it navigates; the answer turns that into a download.
	mux.HandleFunc("/data.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="data.bin"`)
		io.WriteString(w, testAttachment)
	})
	// A page that takes a while to answer, after a link to it was clicked.
	mux.HandleFunc("/late.html", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(400 * time.Millisecond)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><head><title>Late</title></head><body><h1>Late page</h1></body></html>")
	})
	// A page whose load never ends: the body stays open until the client
	// goes away.
	mux.HandleFunc("/slow.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><h1>Still loading</h1>")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		srv.Close()
	})
	return "http://" + ln.Addr().String()
}

// newTestBrowser returns a browser working in a temporary directory, closed
// at the end of the test.
func newTestBrowser(t *testing.T) (*Browser, string) {
	t.Helper()
	dir := t.TempDir()
	b := New(Options{WorkDir: dir, Logger: quietLogger()})
	t.Cleanup(func() { b.Close() })
	return b, dir
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func stepCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// axElements parses the accessibility tree of an interactive observation into
// bid -> description, joining the lines without bid to the bid above them,
// as OpenHands' tests do.
func axElements(content string) map[string]string {
	out := map[string]string{}
	in := false
	cur := ""
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.Contains(line, "BEGIN accessibility tree"):
			in = true
			continue
		case strings.Contains(line, "END accessibility tree"):
			return out
		}
		if !in || line == "" {
			continue
		}
		if m := regexp.MustCompile(`^\[([a-zA-Z0-9]+)\]\s*(.*)`).FindStringSubmatch(line); m != nil {
			cur = m[1]
			out[cur] = m[2]
		} else if cur != "" {
			out[cur] += " " + line
		}
	}
	return out
}

// bidLine matches a line of the accessibility tree that has a bid.
var bidLine = regexp.MustCompile(`^\s*\[([a-zA-Z0-9]+)\] (.*)$`)

// bidOf finds the bid of the first element whose description contains text.
func bidOf(t *testing.T, content, text string) string {
	t.Helper()
	for _, line := range strings.Split(content, "\n") {
		m := bidLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if strings.Contains(m[2], text) {
			return m[1]
		}
	}
	require.Failf(t, "no element", "no element with %q in:\n%s", text, content)
	return ""
}

func TestBrowse_ReturnsPageAsMarkdownWithLinks(t *testing.T) {
	base := serve(t)
	b, dir := newTestBrowser(t)

	obs, err := b.Browse(stepCtx(t, 30*time.Second), base+"/links.html", false)
	require.NoError(t, err)

	assert.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Equal(t, TriggerBrowse, obs.TriggerByAction)
	assert.Equal(t, base+"/links.html", obs.URL)
	assert.Equal(t, []string{base + "/links.html"}, obs.OpenPagesURLs)
	assert.Equal(t, 0, obs.ActivePageIndex)
	assert.Equal(t, fmt.Sprintf("goto(%q)", base+"/links.html"), obs.LastBrowserAction)
	assert.True(t, strings.HasPrefix(obs.Content, "[Current URL: "+base+"/links.html]\n============== BEGIN webpage content ==============\n"), obs.Content)
	assert.True(t, strings.HasSuffix(obs.Content, "\n============== END webpage content ==============\n"), obs.Content)
	assert.Contains(t, obs.Content, "# Hello Markdown")
	assert.Contains(t, obs.Content, "**bold**")
	assert.Contains(t, obs.Content, "[Second page](/page2.html)")
	assert.NotContains(t, obs.Content, "nothing.png")
	assert.True(t, strings.HasPrefix(obs.Screenshot, "data:image/png;base64,"))
	assert.Equal(t, obs.Screenshot, obs.SetOfMarks)
	require.NotEmpty(t, obs.ScreenshotPath)
	assert.Equal(t, filepath.Join(dir, ".browser_screenshots"), filepath.Dir(obs.ScreenshotPath))
	assert.Regexp(t, `^screenshot_\d{8}_\d{6}_\d{6}\.png$`, filepath.Base(obs.ScreenshotPath))
	png, err := os.ReadFile(obs.ScreenshotPath)
	require.NoError(t, err)
	assert.Equal(t, "\x89PNG", string(png[:4]))
	assert.Empty(t, obs.AXTreeObject)
	assert.Empty(t, obs.ExtraElementProperties)
	assert.DirExists(t, filepath.Join(dir, ".downloads"))
}

func TestBrowse_UnreachableHostGivesFailureObservation(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close() // nothing listens there any more: connection refused
	b, _ := newTestBrowser(t)

	tests := []struct {
		name, url, wantErr string
	}{
		{"connection refused", refused, "net::ERR_CONNECTION_REFUSED"},
		// .invalid never resolves (RFC 2606).
		{"unresolvable host", "http://nonexistent.invalid/", "net::ERR_NAME_NOT_RESOLVED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, err := b.Browse(stepCtx(t, 30*time.Second), tt.url, false)
			require.NoError(t, err)

			assert.True(t, obs.Error)
			assert.Equal(t, tt.url, obs.URL)
			assert.Empty(t, obs.Screenshot)
			assert.Contains(t, obs.LastBrowserActionError, tt.wantErr)
			want := "[Current URL: " + tt.url + "]\n" +
				"================ BEGIN error message ===============\n" +
				"The following error occurred when trying to visit the URL:\n" +
				obs.LastBrowserActionError + "\n" +
				"================ END error message ===============\n" +
				"============== BEGIN webpage content ==============\n" +
				obs.LastBrowserActionError + "\n" +
				"============== END webpage content ==============\n"
			assert.Equal(t, want, obs.Content)
		})
	}
}

func TestBrowse_PageThatNeverLoadsIsBoundedByDeadline(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	require.NoError(t, b.Start(stepCtx(t, 30*time.Second)))

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	obs, err := b.Browse(ctx, base+"/slow.html", false)
	require.NoError(t, err)
	assert.NoError(t, ctx.Err(), "the step must return before its deadline")
	assert.True(t, obs.Error)
	assert.Contains(t, obs.LastBrowserActionError, "Timeout")

	// The browser still works afterwards.
	obs, err = b.Browse(stepCtx(t, 30*time.Second), base+"/page1.html", false)
	require.NoError(t, err)
	assert.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Contains(t, obs.Content, "Page 1")
}

func TestBrowser_DisabledReturnsUnavailable(t *testing.T) {
	b := New(Options{Disabled: true, WorkDir: t.TempDir(), Logger: quietLogger()})
	_, err := b.Browse(stepCtx(t, 5*time.Second), "http://127.0.0.1:1/", false)
	assert.ErrorIs(t, err, ErrUnavailable)
	_, err = b.Interact(stepCtx(t, 5*time.Second), "noop()", false)
	assert.ErrorIs(t, err, ErrUnavailable)
	assert.Equal(t, "Browser functionality is not supported or disabled.", UnavailableMessage)
}

func TestBrowser_MissingBinaryReturnsUnavailable(t *testing.T) {
	b := New(Options{ExecPath: filepath.Join(t.TempDir(), "no-chromium"), WorkDir: t.TempDir(), Logger: quietLogger()})
	_, err := b.Browse(stepCtx(t, 10*time.Second), "http://127.0.0.1:1/", false)
	assert.ErrorIs(t, err, ErrUnavailable)
}

func TestBrowser_RestartsAfterChromiumIsKilled(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	obs, err := b.Browse(stepCtx(t, 30*time.Second), base+"/page1.html", false)
	require.NoError(t, err)
	require.False(t, obs.Error)
	pid := b.pid()
	require.NotZero(t, pid)

	require.NoError(t, syscall.Kill(-pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 5*time.Second, 20*time.Millisecond)

	obs, err = b.Browse(stepCtx(t, 30*time.Second), base+"/page2.html", false)
	require.NoError(t, err)
	assert.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Contains(t, obs.Content, "Page 2")
	assert.NotEqual(t, pid, b.pid())
}

func TestBrowser_CloseEndsEveryChromiumProcess(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	_, err := b.Browse(stepCtx(t, 30*time.Second), base+"/page1.html", false)
	require.NoError(t, err)
	pid := b.pid()
	require.NotZero(t, pid)
	members := processGroupMembers(pid)
	require.NotEmpty(t, members)
	profile := b.profileDir()
	require.DirExists(t, profile)

	require.NoError(t, b.Close())

	assert.Eventually(t, func() bool { return len(processGroupMembers(pid)) == 0 }, 5*time.Second, 20*time.Millisecond)
	assert.NoDirExists(t, profile)
	_, err = b.Browse(stepCtx(t, 5*time.Second), base+"/page1.html", false)
	assert.ErrorIs(t, err, ErrUnavailable)
}

// processGroupMembers lists the live processes of a process group.
func processGroupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command name: state ppid pgrp ...
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 2 && fields[0] != "Z" && fields[2] == fmt.Sprint(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestBrowser_RestartsAfterChromiumHangs(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	_, err := b.Browse(stepCtx(t, 30*time.Second), base+"/page1.html", false)
	require.NoError(t, err)
	pid := b.pid()
	require.NoError(t, syscall.Kill(-pid, syscall.SIGSTOP))
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGCONT) })

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	obs, err := b.Interact(ctx, "noop(0)", false)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 3*time.Second, "the step must end at its deadline")
	assert.True(t, obs.Error)
	assert.Equal(t, TimeoutMessage, obs.LastBrowserActionError)

	obs, err = b.Browse(stepCtx(t, 30*time.Second), base+"/page2.html", false)
	require.NoError(t, err)
	assert.False(t, obs.Error, obs.LastBrowserActionError)
	assert.Contains(t, obs.Content, "Page 2")
	assert.NotEqual(t, pid, b.pid())
}

func TestBrowser_EagerStartsWithoutAnAction(t *testing.T) {
	b := New(Options{WorkDir: t.TempDir(), Eager: true, Logger: quietLogger()})
	t.Cleanup(func() { b.Close() })
	assert.Eventually(t, func() bool { return b.pid() != 0 }, 20*time.Second, 50*time.Millisecond)
}

func TestBrowser_CloseEndsARunningStep(t *testing.T) {
	base := serve(t)
	b, _ := newTestBrowser(t)
	require.NoError(t, b.Start(stepCtx(t, 30*time.Second)))

	done := make(chan *Observation, 1)
	go func() {
		obs, _ := b.Browse(stepCtx(t, 60*time.Second), base+"/slow.html", false)
		done <- obs
	}()
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	require.NoError(t, b.Close())

	select {
	case obs := <-done:
		require.NotNil(t, obs)
		assert.True(t, obs.Error)
	case <-time.After(10 * time.Second):
		t.Fatal("the running step did not end when the browser closed")
	}
	assert.Less(t, time.Since(start), 10*time.Second)
}
