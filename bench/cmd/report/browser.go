package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
	"github.com/actionserver/actionserver/event"
)

// measureBrowser measures browse of a local page: the first one from a cold
// start of Chromium, then warm ones.
func measureBrowser(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	page := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "<html><head><title>Bench</title></head><body><h1>Local page</h1><p>Some text and <a href='/a'>a link</a>.</p><button>Press</button></body></html>")
	})}
	go page.Serve(l)
	defer page.Close()
	url := "http://" + l.Addr().String() + "/"

	s, err := benchkit.StartServer(ctx, env, "--enable-browser")
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	browse := func() (time.Duration, error) {
		timeout := 60.0
		start := time.Now()
		obs, err := s.Client.Execute(ctx, &event.BrowseURL{Header: event.Header{Timeout: &timeout}, URL: url, SecurityRisk: event.RiskUnknown})
		if err != nil {
			return 0, err
		}
		if b, ok := obs.(*event.BrowserOutput); !ok || b.Error {
			return 0, fmt.Errorf("browse failed: %s", obs.Text())
		}
		return time.Since(start), nil
	}
	cold, err := browse()
	if err != nil {
		return nil, err
	}
	var warm []time.Duration
	for range env.Iterations(50) {
		d, err := browse()
		if err != nil {
			return nil, err
		}
		warm = append(warm, d)
	}
	p50 := benchkit.Percentile(warm, 50)
	return []benchkit.Row{
		{Metric: "browse a local page, cold Chromium, to the first observation", Value: benchkit.Ms(cold), Target: "≤ 2 s", OK: benchkit.Check(cold <= 2*time.Second)},
		{Metric: "browse a local page, warm Chromium, p50 / p99", Value: benchkit.Ms(p50) + " / " + benchkit.Ms(benchkit.Percentile(warm, 99)),
			Target: "p50 ≤ 150 ms", OK: benchkit.Check(p50 <= 150*time.Millisecond)},
	}, nil
}
