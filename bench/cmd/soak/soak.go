package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/bench/internal/benchkit"
	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/event"
)

// soakConfig configures soak.
type soakConfig struct {
	// Duration is how long the clients run.
	Duration time.Duration
	// Clients is the number of concurrent clients; each has its own
	// session and files.
	Clients int
	// Browser mixes browser actions in (needs Chromium).
	Browser bool
	Logf    func(format string, args ...any)
}

// soakReport is what a soak run found.
type soakReport struct {
	Ops      map[string]int64 // completed operations by kind
	Errors   []string         // unexpected errors and wrong answers (at most 50 kept)
	Baseline api.ServerInfo
	After    api.ServerInfo
	// Leaks lists what did not return to its baseline.
	Leaks []string
}

// soak starts a server and drives it with Clients concurrent clients for
// Duration, mixing shell commands through run actions and through their
// own sessions, file writes and edits, uploads and downloads and (with
// Browser) page visits, checking every answer. Afterwards the server's
// goroutines, descriptors, children and memory must be back near their
// baseline.
func soak(ctx context.Context, env *benchkit.Env, cfg soakConfig) (*soakReport, error) {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	s, err := startSoakServer(ctx, env, cfg.Browser)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	page, stopPage := servePage()
	defer stopPage()

	r := &soakReport{Ops: map[string]int64{}}
	var mu sync.Mutex
	fail := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(r.Errors) < 50 {
			r.Errors = append(r.Errors, fmt.Sprintf(format, a...))
		}
	}
	counts := map[string]*atomic.Int64{}
	for _, k := range []string{"run", "session", "file", "transfer", "browse"} {
		counts[k] = &atomic.Int64{}
	}

	work, err := os.MkdirTemp("", "soak-host-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	ws := s.workDir

	// One warm-up round, so lazily started parts (the browser) count in
	// the baseline.
	if err := soakRound(ctx, s.Client, 0, 0, ws, work, page, cfg.Browser, counts); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	if err := s.Client.DeleteSession(ctx, "soak-0"); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	time.Sleep(2 * time.Second)
	base, err := s.Client.ServerInfo(ctx)
	if err != nil {
		return nil, err
	}
	r.Baseline = *base
	cfg.Logf("soak: baseline %+v rss %d MB; %d clients for %v", base.Runtime, base.Resources.Memory.RSS>>20, cfg.Clients, cfg.Duration)

	deadline := time.Now().Add(cfg.Duration)
	var wg sync.WaitGroup
	for c := 1; c <= cfg.Clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				if err := soakRound(ctx, s.Client, c, i, ws, work, page, cfg.Browser && c%4 == 1, counts); err != nil {
					fail("client %d round %d: %v", c, i, err)
				}
			}
			// A session holds a shell until it is deleted; that is not a leak.
			if err := s.Client.DeleteSession(ctx, fmt.Sprintf("soak-%d", c)); err != nil {
				fail("client %d: delete session: %v", c, err)
			}
		}()
	}
	wg.Wait()
	for k, v := range counts {
		r.Ops[k] = v.Load()
	}

	// Give finished work a moment to be released, then compare.
	var after *api.ServerInfo
	for range 20 {
		time.Sleep(500 * time.Millisecond)
		if after, err = s.Client.ServerInfo(ctx); err != nil {
			return nil, err
		}
		if r.Leaks = leaks(base, after); len(r.Leaks) == 0 {
			break
		}
	}
	r.After = *after
	return r, nil
}

type soakServer struct {
	*benchkit.Server
	workDir string
}

func startSoakServer(ctx context.Context, env *benchkit.Env, browser bool) (*soakServer, error) {
	var extra []string
	if browser {
		// StartServer disables the browser; a later flag enables it.
		extra = append(extra, "--enable-browser")
	}
	s, err := benchkit.StartServer(ctx, env, extra...)
	if err != nil {
		return nil, err
	}
	ws := ""
	for i, a := range s.Cmd.Args {
		if a == "--working-dir" && i+1 < len(s.Cmd.Args) {
			ws = s.Cmd.Args[i+1]
		}
	}
	return &soakServer{Server: s, workDir: ws}, nil
}

// leaks compares the server after the run with its baseline. Goroutines
// and descriptors get a little slack for idle keep-alive connections;
// memory gets room for the runtime's retained heap.
func leaks(base, after *api.ServerInfo) []string {
	var out []string
	b, a := base.Runtime, after.Runtime
	if a.Goroutines > b.Goroutines+8 {
		out = append(out, fmt.Sprintf("goroutines %d → %d", b.Goroutines, a.Goroutines))
	}
	if a.OpenFDs > b.OpenFDs+8 {
		out = append(out, fmt.Sprintf("open descriptors %d → %d", b.OpenFDs, a.OpenFDs))
	}
	if a.Children != b.Children {
		out = append(out, fmt.Sprintf("child processes %d → %d", b.Children, a.Children))
	}
	if rb, ra := base.Resources.Memory.RSS, after.Resources.Memory.RSS; ra > rb+16<<20 {
		out = append(out, fmt.Sprintf("RSS %d MB → %d MB", rb>>20, ra>>20))
	}
	return out
}

// soakRound is one client's mix of operations, each checked.
func soakRound(ctx context.Context, c *client.Client, id, round int, ws, work, page string, browse bool, counts map[string]*atomic.Int64) error {
	tag := fmt.Sprintf("c%d-r%d", id, round)

	// A run action on the shared default shell.
	obs, err := c.Run(ctx, "echo "+tag+" $((6*7))", client.RunOptions{Timeout: time.Minute})
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if obs.Content != tag+" 42" || obs.Metadata.ExitCode != 0 {
		return fmt.Errorf("run: got %q (exit %d)", obs.Content, obs.Metadata.ExitCode)
	}
	counts["run"].Add(1)

	// A command in the client's own session, read by offset.
	sess := fmt.Sprintf("soak-%d", id)
	if _, err := c.GetSession(ctx, sess); errors.Is(err, client.ErrNotFound) {
		if _, err := c.CreateSession(ctx, api.CreateSessionRequest{ID: sess}); err != nil {
			return fmt.Errorf("create session: %w", err)
		}
	}
	cmd, err := c.StartCommand(ctx, sess, "seq 1 200 | tail -n 1")
	if err != nil {
		return fmt.Errorf("start command: %w", err)
	}
	var out strings.Builder
	off := int64(0)
	for {
		ch, err := c.Output(ctx, sess, cmd.ID, off, 5*time.Second)
		if err != nil {
			return fmt.Errorf("output: %w", err)
		}
		out.WriteString(ch.Data)
		off = ch.NextOffset
		if ch.Done {
			break
		}
	}
	if strings.TrimSpace(out.String()) != "200" {
		return fmt.Errorf("session command: got %q", out.String())
	}
	counts["session"].Add(1)

	// Write, edit and read back a file of the client's own.
	p := filepath.Join(ws, "soak", fmt.Sprintf("c%d.txt", id))
	if err := c.Write(ctx, p, "alpha "+tag); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	edit := event.NewFileEdit("str_replace", p)
	oldS, newS := "alpha", "beta"
	edit.OldStr, edit.NewStr = &oldS, &newS
	res, err := c.Edit(ctx, edit)
	if err != nil || strings.HasPrefix(res.Content, "ERROR") {
		return fmt.Errorf("edit: %v %v", err, res)
	}
	text, err := c.Read(ctx, p)
	if err != nil || text != "beta "+tag+"\n" {
		return fmt.Errorf("read back: %q %v", text, err)
	}
	counts["file"].Add(1)

	// Upload a small file and download its directory.
	src := filepath.Join(work, tag+".bin")
	payload := bytes.Repeat([]byte(tag), 2048)
	if err := os.WriteFile(src, payload, 0o644); err != nil {
		return err
	}
	defer os.Remove(src)
	dest := filepath.Join(ws, "up", fmt.Sprintf("c%d", id))
	if err := c.Upload(ctx, src, dest, false, nil); err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	var zipBuf bytes.Buffer
	if _, err := c.Download(ctx, dest, &zipBuf, nil); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if !bytes.Contains(zipBuf.Bytes(), payload) {
		return errors.New("download: the uploaded bytes are not in the archive")
	}
	counts["transfer"].Add(1)

	if browse {
		b, err := c.Execute(ctx, &event.BrowseURL{URL: page, SecurityRisk: event.RiskUnknown})
		if err != nil {
			return fmt.Errorf("browse: %w", err)
		}
		if !strings.Contains(b.Text(), "soak page marker") {
			return fmt.Errorf("browse: page not in the observation: %.200q", b.Text())
		}
		counts["browse"].Add(1)
	}
	return nil
}

// servePage serves a small page on loopback for the browser to visit.
func servePage() (string, func()) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", func() {}
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "<html><body><h1>Soak</h1><p>soak page marker</p><a href='/next'>next</a></body></html>")
	})}
	go srv.Serve(l)
	return "http://" + l.Addr().String() + "/", func() { srv.Close() }
}
