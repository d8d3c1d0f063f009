package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
	"github.com/actionserver/actionserver/client"
)

// EnvdPeerEnv names E2B's envd binary to compare the byte-level file
// routes with (built from its source: packages/envd of e2b-dev/infra,
// `CGO_ENABLED=0 go build`); by default "envd" on PATH.
const EnvdPeerEnv = "ENVD_PEER_BIN"

// envdTransferSize is the file moved each way, as in the issue that asked
// for the comparison.
const envdTransferSize = 100 << 20

// envdPeer is envd running in a network namespace of its own: it listens
// on every interface and cannot be told otherwise, and benchmarks bind
// loopback only. The bench reaches it by creating its sockets in that
// namespace.
type envdPeer struct {
	cmd          *exec.Cmd
	netns        *os.File
	url          string
	hc           *http.Client
	removeRunDir bool
}

// envdRunDir is where envd leaves its marker files.
const envdRunDir = "/run/e2b"

func startEnvd(ctx context.Context, bin string) (*envdPeer, error) {
	if os.Getuid() != 0 {
		return nil, errors.New("needs root (a network namespace of its own)")
	}
	// envd marks the machine as a sandbox in /run/e2b; what it made is
	// removed when it stops.
	_, statErr := os.Stat(envdRunDir)
	port := 49983
	cmd := exec.Command("unshare", "--net", "sh", "-c", `ip link set lo up && exec "$0" -isnotfc -no-cgroups -port "$1"`, bin, strconv.Itoa(port))
	var out bytes.Buffer // read only after Wait
	cmd.Stdout, cmd.Stderr = io.Discard, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start envd: %w", err)
	}
	p := &envdPeer{cmd: cmd, url: fmt.Sprintf("http://127.0.0.1:%d", port), removeRunDir: errors.Is(statErr, os.ErrNotExist)}
	var err error
	// unshare(1) execs into sh and sh into envd: one pid throughout.
	deadline := time.Now().Add(30 * time.Second)
	for p.netns == nil {
		p.netns, err = os.Open(fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid))
		if err != nil || time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("envd's network namespace: %v", err)
		}
		var self, their unix.Stat_t
		if unix.Stat("/proc/self/ns/net", &self) == nil && unix.Fstat(int(p.netns.Fd()), &their) == nil && self.Ino == their.Ino {
			p.netns.Close() // not unshared yet
			p.netns = nil
			time.Sleep(time.Millisecond)
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = p.dial
	tr.DisableCompression = true
	p.hc = &http.Client{Transport: tr}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/health", nil)
		resp, err := p.hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("envd not ready after 30 s: %v; it said: %.500s", err, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dial opens a connection from inside envd's network namespace: the
// socket is made by a thread switched there, and stays there after.
func (p *envdPeer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// The thread is left locked, so it ends with the goroutine
		// instead of serving others from the wrong namespace.
		if err := unix.Setns(int(p.netns.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- result{nil, fmt.Errorf("enter envd's network namespace: %w", err)}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		done <- result{c, err}
	}()
	r := <-done
	return r.c, r.err
}

func (p *envdPeer) stop() {
	if p.netns != nil {
		p.netns.Close()
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Wait()
	if p.removeRunDir {
		_ = os.RemoveAll(envdRunDir)
	}
}

func (p *envdPeer) upload(ctx context.Context, src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/files?username=root&path="+url.QueryEscape(dst), f)
	if err != nil {
		return err
	}
	req.ContentLength = envdTransferSize
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := p.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("envd upload: %s", resp.Status)
	}
	return nil
}

func (p *envdPeer) download(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/files?username=root&path="+url.QueryEscape(path), nil)
	if err != nil {
		return err
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && (resp.StatusCode != http.StatusOK || n != envdTransferSize) {
		err = fmt.Errorf("envd download: %s, %d bytes", resp.Status, n)
	}
	return err
}

// measureEnvdPeer moves one 100 MB file each way through our byte-level
// file routes (with the Go client) and through envd's /files, taking
// turns, and compares the median rates.
func measureEnvdPeer(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	notMeasured := func(why string) ([]benchkit.Row, error) {
		env.Logf("  envd peer not measured: %s", why)
		return []benchkit.Row{{Metric: "peer: envd download and upload 100 MB (one file)", Value: "not measured: " + why}}, nil
	}
	bin := os.Getenv(EnvdPeerEnv)
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("envd"); err != nil {
			return notMeasured("no envd binary (set " + EnvdPeerEnv + ")")
		}
	}
	dir, err := os.MkdirTemp(memDir(), "bench-envd-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "payload.bin")
	if err := writePayload(src, envdTransferSize); err != nil {
		return nil, err
	}
	peer, err := startEnvd(ctx, bin)
	if err != nil {
		return notMeasured(err.Error())
	}
	defer peer.stop()
	s, err := benchkit.StartServer(ctx, env)
	if err != nil {
		return nil, err
	}
	defer s.Stop()

	ours, theirs := filepath.Join(dir, "ours.bin"), filepath.Join(dir, "theirs.bin")
	oursUp := func() error {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = s.Client.WriteFile(ctx, ours, f, client.WriteFileOptions{Size: envdTransferSize})
		return err
	}
	oursDown := func() error {
		r, err := s.Client.OpenFile(ctx, ours, 0)
		if err != nil {
			return err
		}
		defer r.Close()
		n, err := io.Copy(io.Discard, r)
		if err == nil && n != envdTransferSize {
			err = fmt.Errorf("%d bytes", n)
		}
		return err
	}
	runs := 7
	if env.Quick {
		runs = 2
	}
	var up, down, envdUp, envdDown []float64
	timed := func(into *[]float64, fn func() error) error { return timedRate(into, envdTransferSize, fn) }
	for i := range runs + 1 {
		if i == 1 {
			up, down, envdUp, envdDown = nil, nil, nil, nil // the first round warms up
		}
		steps := []struct {
			into *[]float64
			fn   func() error
			name string
		}{
			{&envdUp, func() error { return peer.upload(ctx, src, theirs) }, "envd upload"},
			{&up, oursUp, "upload"},
			{&envdDown, func() error { return peer.download(ctx, theirs) }, "envd download"},
			{&down, oursDown, "download"},
		}
		for _, st := range steps {
			if err := timed(st.into, st.fn); err != nil {
				return nil, fmt.Errorf("%s: %w", st.name, err)
			}
		}
	}
	env.Logf("  MB/s upload: ours %.0f, envd %.0f; download: ours %.0f, envd %.0f", up, envdUp, down, envdDown)
	mu, md, eu, ed := median(up), median(down), median(envdUp), median(envdDown)
	mbs := func(v float64) string { return fmt.Sprintf("%.0f MB/s", v) }
	return []benchkit.Row{
		{Metric: "peer: download 100 MB, one file's bytes (median)", Value: mbs(md), Floor: mbs(ed) + " envd",
			Ratio: benchkit.Ratio(md, ed), Target: "≥ envd", OK: benchkit.Check(md >= ed)},
		{Metric: "peer: upload 100 MB, one file's bytes (median)", Value: mbs(mu), Floor: mbs(eu) + " envd",
			Ratio: benchkit.Ratio(mu, eu), Target: "≥ envd", OK: benchkit.Check(mu >= eu)},
	}, nil
}
