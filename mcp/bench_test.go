package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/mcptest"
	"github.com/actionserver/actionserver/mcp"
)

// BenchmarkEcho_ProxyVsStdio times tools/call of the everything server's
// echo through the proxy's SSE endpoint and directly over stdio to a
// second copy of the same server, interleaved, and reports the
// percentiles of both and the ratio of the medians.
func BenchmarkEcho_ProxyVsStdio(b *testing.B) {
	ev := mcptest.Everything(b)
	p := newBenchProxy(b)
	ctx := context.Background()
	_, err := p.m.Update(ctx, []mcp.ServerConfig{{Name: "everything", Command: ev.Command, Args: ev.Args}})
	require.NoError(b, err)
	proxied, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &sdk.SSEClientTransport{Endpoint: p.url}, nil)
	require.NoError(b, err)
	defer proxied.Close()
	direct, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: exec.Command(ev.Command, ev.Args...)}, nil)
	require.NoError(b, err)
	defer direct.Close()

	var viaProxy, viaStdio []time.Duration
	call := func(s *sdk.ClientSession) time.Duration {
		start := time.Now()
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "ping"}})
		d := time.Since(start)
		require.NoError(b, err)
		require.False(b, res.IsError)
		return d
	}
	b.ResetTimer()
	for b.Loop() {
		viaProxy = append(viaProxy, call(proxied))
		viaStdio = append(viaStdio, call(direct))
	}
	b.StopTimer()
	pct := func(d []time.Duration, p int) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[(len(s)-1)*p/100].Microseconds())
	}
	b.ReportMetric(pct(viaProxy, 50), "proxy-p50-µs")
	b.ReportMetric(pct(viaProxy, 99), "proxy-p99-µs")
	b.ReportMetric(pct(viaStdio, 50), "stdio-p50-µs")
	b.ReportMetric(pct(viaStdio, 99), "stdio-p99-µs")
	b.ReportMetric(pct(viaProxy, 50)/pct(viaStdio, 50), "p50-ratio")
}

// BenchmarkHeldServerMemory reports the proxy's own Go heap for each stdio
// server it holds (the servers' processes are not counted).
func BenchmarkHeldServerMemory(b *testing.B) {
	ev := mcptest.Everything(b)
	const n = 4
	cfgs := make([]mcp.ServerConfig, n)
	for i := range cfgs {
		cfgs[i] = mcp.ServerConfig{Name: string(rune('a' + i)), Command: ev.Command, Args: ev.Args}
	}
	for b.Loop() {
		m := mcp.NewManager(mcp.Options{Dir: b.TempDir(), Env: os.Environ()})
		before := heapInUse()
		_, err := m.Update(context.Background(), cfgs)
		require.NoError(b, err)
		after := heapInUse()
		b.ReportMetric(float64(after-before)/n, "heap-B/server")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		require.NoError(b, m.Close(ctx))
		cancel()
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

func newBenchProxy(b *testing.B) *proxy {
	// newProxy takes *testing.T; the benchmark builds the same by hand.
	return newProxyTB(b, mcp.Options{Dir: b.TempDir(), Env: os.Environ()})
}
