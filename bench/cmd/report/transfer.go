package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
)

// transferSize is the file moved each way.
const transferSize = 256 << 20

// measureFileTransfer moves a 256 MB file into and out of the sandbox through the
// HTTP API (multipart upload; zip download) and compares the throughput
// with the floor: a minimal net/http handler streaming the same bytes from
// a request body to a file and from a file to a response, measured in the
// same run. It also reports the server's peak RSS over the transfers.
func measureFileTransfer(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	// In memory when the machine has a tmpfs: this disk's write speed
	// swings between runs by a factor of three (block discards), which
	// would drown the difference between server and floor.
	dir, err := os.MkdirTemp(memDir(), "bench-transfer-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "payload.bin")
	if err := writePayload(src, transferSize); err != nil {
		return nil, err
	}
	runs := 7
	if env.Quick {
		runs = 2
	}

	fl, err := startFloor(env, dir)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	defer fl.close()
	s, err := benchkit.StartServer(ctx, env)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	dest := filepath.Join(dir, "sandbox")

	// Floor and server take turns, each starting with no dirty pages, so
	// neither pays for the other's writeback.
	var up, down, floorUp, floorDown []float64
	timed := func(into *[]float64, fn func() error) error { return timedRate(into, transferSize, fn) }
	for i := range runs + 1 {
		if i == 1 {
			// The first round warms both sides up; it is not counted.
			up, down, floorUp, floorDown = nil, nil, nil, nil
		}
		if err := timed(&floorUp, func() error { return fl.upload(ctx, src) }); err != nil {
			return nil, fmt.Errorf("floor upload: %w", err)
		}
		if err := timed(&up, func() error { return s.Client.Upload(ctx, src, dest, false, nil) }); err != nil {
			return nil, fmt.Errorf("upload: %w", err)
		}
		if err := timed(&floorDown, func() error { return fl.download(ctx) }); err != nil {
			return nil, fmt.Errorf("floor download: %w", err)
		}
		if err := timed(&down, func() error {
			_, err := s.Client.Download(ctx, dest, io.Discard, nil)
			return err
		}); err != nil {
			return nil, fmt.Errorf("download: %w", err)
		}
	}
	env.Logf("  upload MB/s: server %.0f, floor %.0f; download: server %.0f, floor %.0f", up, floorUp, down, floorDown)
	peak, err := benchkit.RSS(s.Cmd.Process.Pid, true)
	if err != nil {
		return nil, err
	}
	mu, md := median(up), median(down)
	fu, fd := median(floorUp), median(floorDown)
	return []benchkit.Row{
		{Metric: "upload 256 MB (multipart) median", Value: fmt.Sprintf("%.0f MB/s", mu), Floor: fmt.Sprintf("%.0f MB/s", fu),
			Ratio: benchkit.Ratio(mu, fu), Target: "≥ 80% of floor", OK: benchkit.Check(mu >= 0.8*fu)},
		{Metric: "download 256 MB (zip) median", Value: fmt.Sprintf("%.0f MB/s", md), Floor: fmt.Sprintf("%.0f MB/s", fd),
			Ratio: benchkit.Ratio(md, fd), Target: "≥ 80% of floor", OK: benchkit.Check(md >= 0.8*fd)},
		{Metric: fmt.Sprintf("server peak RSS over %d transfers each way", runs), Value: benchkit.MB(peak),
			Target: "< 40 MB", OK: benchkit.Check(peak < 40<<20)},
	}, nil
}

// writePayload writes size bytes of varied (not sparse, not all-zero) data.
func writePayload(path string, size int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i*7 + i>>8)
	}
	for n := 0; n < size; n += len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// floor is the minimal handler (cmd/floorserver), run as its own process
// as the action server is, so both pay the same for crossing processes.
type floor struct {
	url string
	cmd *exec.Cmd
}

func startFloor(env *benchkit.Env, dir string) (*floor, error) {
	cmd := exec.Command(filepath.Join(env.BinDir, "floorserver"), "-file", filepath.Join(dir, "floor.bin"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the floor server: %w", err)
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("floor server: %w", err)
	}
	return &floor{url: "http://" + strings.TrimSpace(addr) + "/", cmd: cmd}, nil
}

func (f *floor) close() {
	f.cmd.Process.Kill()
	f.cmd.Wait()
}

// upload PUTs the file chunked: measured here, that is faster than the
// same PUT with a Content-Length (which makes the client use sendfile), so
// it is the floor.
func (f *floor) upload(ctx context.Context, src string) error {
	file, err := os.Open(src)
	if err != nil {
		return err
	}
	defer file.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, f.url, file)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

func (f *floor) download(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && n != transferSize {
		err = fmt.Errorf("%d bytes", n)
	}
	return err
}

// memDir returns a tmpfs directory to measure in, or "" (the default
// temporary directory).
func memDir() string {
	var st syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &st) == nil && st.Type == 0x01021994 && st.Bavail*uint64(st.Bsize) > 4*transferSize {
		return "/dev/shm"
	}
	return ""
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / (1 << 20) / d.Seconds() }

// timedRate runs fn, a transfer of size bytes, from a machine with no
// dirty pages (so no side pays for another's writeback), and appends its
// rate in MB/s to into.
func timedRate(into *[]float64, size int64, fn func() error) error {
	syscall.Sync()
	start := time.Now()
	if err := fn(); err != nil {
		return err
	}
	*into = append(*into, mbps(size, time.Since(start)))
	return nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
