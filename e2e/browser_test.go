package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/event"
)

// browserServer starts a server with the browser enabled, adding extra to
// its command line.
func browserServer(t *testing.T, extra ...string) *server {
	if _, err := exec.LookPath("chromium"); err != nil {
		if _, err := os.Stat("/usr/lib/chromium/chromium"); err != nil {
			t.Fatal("Chromium is not installed; run scripts/deps.sh")
		}
	}
	ws := t.TempDir()
	return startServer(t, startOpts{workDir: ws, args: append([]string{"--working-dir", ws}, extra...)})
}

func TestBrowser_EagerFlagStartsChromiumWithoutAnAction(t *testing.T) {
	s := browserServer(t, "--browser-eager")
	assert.Eventually(t, func() bool { return hasChromiumChild(t, s.cmd.Process.Pid) }, 30*time.Second, 100*time.Millisecond,
		"no browser process under the server, though no browser action was sent")
}

// hasChromiumChild reports whether a direct child of pid runs Chromium.
func hasChromiumChild(t *testing.T, pid int) bool {
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // not a process, or gone
		}
		// The command name in parentheses may hold spaces; the parent id
		// is the second field after it.
		rest := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(rest) < 2 || rest[1] != strconv.Itoa(pid) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(string(cmdline), "chromium") {
			return true
		}
	}
	return false
}

func TestBrowse_PageServedFromTheSandbox(t *testing.T) {
	s := browserServer(t)
	ctx := ctxT(t)
	_, err := os.Stat(s.WorkDir + "/.downloads")
	require.NoError(t, err, "the downloads directory exists from the start")

	port := freePort(t)
	_, err = s.Client.Run(ctx, fmt.Sprintf("python3 -m http.server %d > server.log 2>&1 &", port), client.RunOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 20*time.Second, 50*time.Millisecond)
	t.Cleanup(func() { s.Client.Run(ctxT(t), "kill %1", client.RunOptions{}) })

	timeout := 60.0
	obs, err := s.Client.Execute(ctx, &event.BrowseURL{Header: event.Header{Timeout: &timeout},
		URL: fmt.Sprintf("http://localhost:%d", port), SecurityRisk: event.RiskUnknown})
	require.NoError(t, err)
	b, ok := obs.(*event.BrowserOutput)
	require.True(t, ok, "got %T: %s", obs, obs.Text())
	assert.False(t, b.Error, b.LastBrowserActionError)
	assert.Contains(t, b.Content, "Directory listing for /")
	assert.Contains(t, b.Content, "server.log")
	assert.Contains(t, b.Content, "============== BEGIN webpage content ==============")
	assert.True(t, strings.HasPrefix(b.Screenshot, "data:image/png;base64,"))
	require.NotNil(t, b.ScreenshotPath)
	_, err = os.Stat(*b.ScreenshotPath)
	assert.NoError(t, err, "the screenshot is saved")
	assert.Equal(t, fmt.Sprintf(`goto("http://localhost:%d")`, port), b.LastBrowserAction)
}

func TestBrowseInteractive_ClickChangesPage(t *testing.T) {
	s := browserServer(t)
	ctx := ctxT(t)
	page := httpPage(t, `<html><body><h1>Counter</h1>
<button onclick="document.getElementById('out').textContent='clicked!'">Click me</button>
<p id="out">not yet</p></body></html>`)

	timeout := 60.0
	run := func(code string) *event.BrowserOutput {
		obs, err := s.Client.Execute(ctx, &event.BrowseInteractive{Header: event.Header{Timeout: &timeout},
			BrowserActions: code, SecurityRisk: event.RiskUnknown})
		require.NoError(t, err)
		b, ok := obs.(*event.BrowserOutput)
		require.True(t, ok, "got %T: %s", obs, obs.Text())
		return b
	}
	b := run(fmt.Sprintf("goto(%q)", page))
	require.False(t, b.Error, b.LastBrowserActionError)
	m := regexp.MustCompile(`\[(\w+)\] button 'Click me'`).FindStringSubmatch(b.Content)
	require.NotNil(t, m, "the button has a bid in the tree:\n%s", b.Content)

	b = run(fmt.Sprintf("click(%q)", m[1]))
	assert.False(t, b.Error, b.LastBrowserActionError)
	assert.Contains(t, b.Content, "[Action executed successfully.]")
	assert.Contains(t, b.Content, "clicked!")

	b = run(`click("no-such-bid")`)
	assert.True(t, b.Error)
	assert.Contains(t, b.Content, "BEGIN error message")
}

// TestBrowseInteractive_DownloadObservation checks the download observation
// on the wire (contract §11.5): a step that downloads answers with
// observation "download" instead of the page, and the copy in the
// workspace belongs to the sandbox user like any file made for the agent.
func TestBrowseInteractive_DownloadObservation(t *testing.T) {
	var s *server
	asUser := os.Getuid() == 0
	if asUser {
		s, _ = startAsSandboxUser(t, "--enable-browser")
	} else {
		s = browserServer(t)
	}
	const pdf = "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
	const data = "\x00\x01raw bytes\xff\xfe"
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><a href="/data.bin">Get the data</a></body></html>`)
	})
	mux.HandleFunc("/report.pdf", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		io.WriteString(w, pdf)
	})
	mux.HandleFunc("/data.bin", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="data.bin"`)
		io.WriteString(w, data)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	site := &http.Server{Handler: mux}
	go site.Serve(l)
	t.Cleanup(func() { site.Close() })
	base := "http://" + l.Addr().String()

	step := func(code string) map[string]any {
		body, err := json.Marshal(map[string]any{"action": map[string]any{"action": "browse_interactive",
			"args": map[string]any{"browser_actions": code}}, "timeout": 60})
		require.NoError(t, err)
		status, out := post(t, s, string(body), nil)
		require.Equal(t, http.StatusOK, status, out)
		return out
	}
	download := func(code, path string) map[string]any {
		return map[string]any{
			"observation": "download",
			"message":     "Downloaded the file at location: " + path,
			"content":     "Execution of the previous action " + code + " resulted in a file download. The downloaded file is saved at location: " + path,
			"extras":      map[string]any{"file_path": path},
		}
	}
	saved := func(path, want string) {
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
		if !asUser {
			return
		}
		fi, err := os.Lstat(path)
		require.NoError(t, err)
		assert.Equal(t, uint32(testUID), fi.Sys().(*syscall.Stat_t).Uid, "%s belongs to the sandbox user", path)
	}

	// Going to a PDF downloads it: Chromium runs without a PDF viewer.
	code := fmt.Sprintf("goto(%q)", base+"/report.pdf")
	want := filepath.Join(s.WorkDir, "file_1.pdf")
	got := step(code)
	require.Equal(t, "download", got["observation"], "content: %v", got["content"])
	assert.Equal(t, download(code, want), got)
	saved(want, pdf)

	// So does a click on an attachment link; the name's extension is used
	// when the bytes say nothing, and numbering goes on.
	page := step(fmt.Sprintf("goto(%q)", base+"/"))
	require.Equal(t, "browse", page["observation"], page["content"])
	m := regexp.MustCompile(`\[(\w+)\] link 'Get the data'`).FindStringSubmatch(page["content"].(string))
	require.NotNil(t, m, "the link has a bid:\n%s", page["content"])
	code = fmt.Sprintf("click(%q)", m[1])
	want = filepath.Join(s.WorkDir, "file_2.bin")
	got = step(code)
	require.Equal(t, "download", got["observation"], "content: %v", got["content"])
	assert.Equal(t, download(code, want), got)
	saved(want, data)
}

// httpPage serves one HTML page on loopback and returns its URL.
func httpPage(t *testing.T, html string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, html)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String() + "/"
}

func TestActionctl_Browse(t *testing.T) {
	s := browserServer(t)
	page := httpPage(t, `<html><body><h1>Hello from a page</h1><a href="/next">next page</a></body></html>`)
	shot := t.TempDir() + "/shot.png"
	out, err := exec.Command(binDir+"/actionctl", "--url", s.URL, "browse", "--shot", shot, page).Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "# Hello from a page")
	assert.Contains(t, string(out), "[next page](")
	assert.NotContains(t, string(out), "BEGIN webpage content")
	png, err := os.ReadFile(shot)
	require.NoError(t, err)
	assert.Equal(t, "\x89PNG", string(png[:4]))
}

// TestFileViewer_ThroughTheBrowser ports the PNG half of upstream's
// file-viewer test: agents read /tmp/oh-server-url and browse to
// <url>/view?path=<file>.
func TestFileViewer_ThroughTheBrowser(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		if _, err := os.Stat("/usr/lib/chromium/chromium"); err != nil {
			t.Fatal("Chromium is not installed; run scripts/deps.sh")
		}
	}
	ws := t.TempDir()
	// Servers of other test packages run at the same time; this one's
	// address goes to a file of its own.
	urlFile := t.TempDir() + "/server-url"
	s := startServer(t, startOpts{workDir: ws, args: []string{"--working-dir", ws}, env: []string{"FILE_VIEWER_URL_FILE=" + urlFile}})
	ctx := ctxT(t)
	png := s.WorkDir + "/test_image.png"
	pngBytes := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82")
	require.NoError(t, os.WriteFile(png, pngBytes, 0o644))
	obs, err := s.Client.Run(ctx, "cat "+urlFile, client.RunOptions{})
	require.NoError(t, err)
	require.Regexp(t, `^http://localhost:\d+/[0-9a-f]{32}$`, obs.Content, "the address carries the token")

	timeout := 60.0
	out, err := s.Client.Execute(ctx, &event.BrowseInteractive{Header: event.Header{Timeout: &timeout},
		BrowserActions: fmt.Sprintf("goto(%q)", obs.Content+"/view?path="+png), SecurityRisk: event.RiskUnknown})
	require.NoError(t, err)
	b, ok := out.(*event.BrowserOutput)
	require.True(t, ok, "got %T: %s", out, out.Text())
	assert.False(t, b.Error, b.LastBrowserActionError)
	assert.Contains(t, b.Content, "[Action executed successfully.]")
	assert.Contains(t, b.Content, "File Viewer - test_image.png")
}
