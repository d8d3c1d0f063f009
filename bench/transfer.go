package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// transferSize is the file moved each way.
const transferSize = 256 << 20

// FileTransfer moves a 256 MB file into and out of the sandbox through the
// HTTP API (multipart upload; zip download) and compares the throughput
// with the floor: a minimal net/http handler streaming the same bytes from
// a request body to a file and from a file to a response, measured in the
// same run. It also reports the server's peak RSS over the transfers.
var FileTransfer = Scenario{Name: "file transfer", Run: func(ctx context.Context, env *Env) ([]Row, error) {
	dir, err := os.MkdirTemp("", "bench-transfer-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "payload.bin")
	if err := writePayload(src, transferSize); err != nil {
		return nil, err
	}
	runs := 5
	if env.Quick {
		runs = 2
	}

	floorUp, floorDown, err := floorTransfer(ctx, dir, src, runs)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}

	s, err := StartServer(ctx, env)
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	dest := filepath.Join(dir, "sandbox")
	var up, down []float64
	for range runs {
		start := time.Now()
		if err := s.Client.Upload(ctx, src, dest, false, nil); err != nil {
			return nil, fmt.Errorf("upload: %w", err)
		}
		up = append(up, mbps(transferSize, time.Since(start)))
		start = time.Now()
		if _, err := s.Client.Download(ctx, dest, io.Discard, nil); err != nil {
			return nil, fmt.Errorf("download: %w", err)
		}
		down = append(down, mbps(transferSize, time.Since(start)))
	}
	peak, err := RSS(s.Cmd.Process.Pid, true)
	if err != nil {
		return nil, err
	}
	mu, md := median(up), median(down)
	fu, fd := median(floorUp), median(floorDown)
	return []Row{
		{Metric: "upload 256 MB (multipart) median", Value: fmt.Sprintf("%.0f MB/s", mu), Floor: fmt.Sprintf("%.0f MB/s", fu),
			Ratio: Ratio(mu, fu), Target: "≥ 80% of floor", OK: Check(mu >= 0.8*fu)},
		{Metric: "download 256 MB (zip) median", Value: fmt.Sprintf("%.0f MB/s", md), Floor: fmt.Sprintf("%.0f MB/s", fd),
			Ratio: Ratio(md, fd), Target: "≥ 80% of floor", OK: Check(md >= 0.8*fd)},
		{Metric: fmt.Sprintf("server peak RSS over %d transfers each way", runs), Value: MB(peak),
			Target: "< 40 MB", OK: Check(peak < 40<<20)},
	}, nil
}}

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

// floorTransfer runs the minimal handler: PUT streams the body to a file,
// GET streams the file back (chunked, as the server's zip is, since
// neither announces a length).
func floorTransfer(ctx context.Context, dir, src string, runs int) (up, down []float64, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	stored := filepath.Join(dir, "floor.bin")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPut:
			f, err := os.Create(stored)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			_, err = io.Copy(f, r.Body)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				http.Error(w, err.Error(), 500)
			}
		case http.MethodGet:
			f, err := os.Open(stored)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			defer f.Close()
			// No Content-Length, so the response is chunked and cannot use
			// sendfile, like the server's zip stream.
			io.Copy(w, f)
		}
	})}
	go srv.Serve(l)
	defer srv.Close()
	url := "http://" + l.Addr().String() + "/"
	for range runs {
		f, err := os.Open(src)
		if err != nil {
			return nil, nil, err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, url, f)
		// Chunked: measured here, it is faster than the same PUT with a
		// Content-Length (which makes the client use sendfile), so it is
		// the floor.
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		up = append(up, mbps(transferSize, time.Since(start)))

		start = time.Now()
		resp, err = http.Get(url)
		if err != nil {
			return nil, nil, err
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n != transferSize {
			return nil, nil, fmt.Errorf("floor download: %d bytes", n)
		}
		down = append(down, mbps(transferSize, time.Since(start)))
	}
	return up, down, nil
}

func mbps(n int64, d time.Duration) float64 { return float64(n) / (1 << 20) / d.Seconds() }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
