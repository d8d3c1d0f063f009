package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
	"github.com/actionserver/actionserver/client"
)

// peerTransferSize is the file moved each way in the peer comparison.
const peerTransferSize = 100 << 20

// peerResult is what is measured on one server.
type peerResult struct {
	ready, true50, true99, seq time.Duration
	rss                        int64
	up, down                   float64 // MB/s
}

// measureUpstreamPeer measures the upstream Python server (openhands-ai's
// action_execution_server, from the compat suite's environment) beside
// ours in the same run, both started with DockerRuntime's command line
// (no plugins, browser off) and driven by the same Go client.
func measureUpstreamPeer(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	python := os.Getenv(PeerPythonEnv)
	if python == "" {
		python = defaultPeerPython
	}
	var err error
	if _, err = os.Stat(python); err != nil {
		env.Logf("  upstream peer skipped: no %s (run compat/openhands/setup.sh, or set %s)", python, PeerPythonEnv)
		return []benchkit.Row{{Metric: "upstream peer", Value: "not measured: no openhands-ai environment (compat/openhands/setup.sh)"}}, nil
	}
	if python, err = filepath.Abs(python); err != nil {
		return nil, err
	}
	if err := becomeSubreaper(); err != nil {
		return nil, fmt.Errorf("become subreaper: %w", err)
	}
	dir, err := os.MkdirTemp(memDir(), "bench-peer-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "payload.bin")
	if err := writePayload(src, peerTransferSize); err != nil {
		return nil, err
	}
	ours, err := measurePeer(ctx, env, "", src)
	if err != nil {
		return nil, fmt.Errorf("action-server: %w", err)
	}
	theirs, err := measurePeer(ctx, env, python, src)
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	d := func(v time.Duration) float64 { return float64(v) }
	mbs := func(v float64) string { return fmt.Sprintf("%.0f MB/s", v) }
	// The ratio is upstream's over ours: how many times slower (or bigger)
	// upstream is; for throughput, ours over upstream's.
	return []benchkit.Row{
		{Metric: "peer: `true` round trip p50 (upstream vs ours)", Value: benchkit.Ms(ours.true50), Floor: benchkit.Ms(theirs.true50) + " upstream", Ratio: benchkit.Ratio(d(theirs.true50), d(ours.true50))},
		{Metric: "peer: `true` round trip p99", Value: benchkit.Ms(ours.true99), Floor: benchkit.Ms(theirs.true99) + " upstream", Ratio: benchkit.Ratio(d(theirs.true99), d(ours.true99))},
		{Metric: "peer: start to /alive 200 (median)", Value: benchkit.Ms(ours.ready), Floor: benchkit.Ms(theirs.ready) + " upstream", Ratio: benchkit.Ratio(d(theirs.ready), d(ours.ready))},
		{Metric: "peer: idle RSS, whole process tree", Value: benchkit.MB(ours.rss), Floor: benchkit.MB(theirs.rss) + " upstream", Ratio: benchkit.Ratio(float64(theirs.rss), float64(ours.rss))},
		{Metric: "peer: `seq 1 1000000` (median)", Value: benchkit.Ms(ours.seq), Floor: benchkit.Ms(theirs.seq) + " upstream", Ratio: benchkit.Ratio(d(theirs.seq), d(ours.seq))},
		{Metric: "peer: upload 100 MB (median)", Value: mbs(ours.up), Floor: mbs(theirs.up) + " upstream", Ratio: benchkit.Ratio(ours.up, theirs.up)},
		{Metric: "peer: download 100 MB (zip, median)", Value: mbs(ours.down), Floor: mbs(theirs.down) + " upstream", Ratio: benchkit.Ratio(ours.down, theirs.down)},
	}, nil
}

// measurePeer starts the server a few times for its start-up time, then
// measures the rest on the last one.
func measurePeer(ctx context.Context, env *benchkit.Env, python, src string) (*peerResult, error) {
	starts := 3
	var readies []time.Duration
	var p *Peer
	for i := range starts {
		s, err := startPeer(ctx, env, python)
		if err != nil {
			return nil, err
		}
		readies = append(readies, s.Ready)
		if i < starts-1 {
			s.Stop()
			continue
		}
		p = s
	}
	defer p.Stop()
	env.Logf("  %s ready in %v", p.Name, readies)
	r := &peerResult{ready: benchkit.Percentile(readies, 50)}

	// Idle: after a first command, as a host's set-up leaves it.
	if _, err := p.Client.Run(ctx, "true", client.RunOptions{Timeout: 30 * time.Second}); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second)
	rss, err := p.TreeRSS()
	if err != nil {
		return nil, err
	}
	r.rss = rss

	n := env.Iterations(200)
	var lat []time.Duration
	for i := range n + n/10 {
		start := time.Now()
		obs, err := p.Client.Run(ctx, "true", client.RunOptions{Timeout: 30 * time.Second})
		if err != nil {
			return nil, err
		}
		if obs.Metadata.ExitCode != 0 {
			return nil, fmt.Errorf("true exited %d", obs.Metadata.ExitCode)
		}
		if i >= n/10 {
			lat = append(lat, time.Since(start))
		}
	}
	r.true50, r.true99 = benchkit.Percentile(lat, 50), benchkit.Percentile(lat, 99)

	var seqs []time.Duration
	for range 3 {
		start := time.Now()
		obs, err := p.Client.Run(ctx, "seq 1 1000000", client.RunOptions{Timeout: 300 * time.Second, Blocking: true})
		if err != nil {
			return nil, err
		}
		if obs.Metadata.ExitCode != 0 {
			return nil, fmt.Errorf("seq exited %d", obs.Metadata.ExitCode)
		}
		seqs = append(seqs, time.Since(start))
	}
	r.seq = benchkit.Percentile(seqs, 50)

	dest := filepath.Join(p.ws, "upload")
	var ups, downs []float64
	for range 3 {
		start := time.Now()
		if err := p.Client.Upload(ctx, src, dest, false, nil); err != nil {
			return nil, fmt.Errorf("upload: %w", err)
		}
		ups = append(ups, mbps(peerTransferSize, time.Since(start)))
		start = time.Now()
		n, err := p.Client.Download(ctx, dest, io.Discard, nil)
		if err != nil {
			return nil, fmt.Errorf("download: %w", err)
		}
		if n == 0 {
			return nil, fmt.Errorf("download: nothing")
		}
		downs = append(downs, mbps(peerTransferSize, time.Since(start)))
	}
	r.up, r.down = median(ups), median(downs)
	env.Logf("  %s: ready %v, rss %s, true p50 %v, seq %v, up %.0f MB/s, down %.0f MB/s",
		p.Name, r.ready, benchkit.MB(r.rss), r.true50, r.seq, r.up, r.down)
	return r, nil
}
