package main

import (
	"context"
	"fmt"
	"time"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
	"github.com/actionserver/actionserver/event"
)

// measureIPython measures the jupyter plugin: the server's start to ready with
// the plugin (a cold Jupyter Server and kernel), and run_ipython of 1+1
// through HTTP on the warm kernel.
func measureIPython(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error) {
	s, err := benchkit.StartServer(ctx, env, "--plugins", "jupyter")
	if err != nil {
		return nil, err
	}
	defer s.Stop()
	n := env.Iterations(500)
	var d []time.Duration
	for i := range n + n/10 {
		a := &event.IPythonRunCell{Code: "1+1", ConfirmationState: "confirmed", SecurityRisk: event.RiskUnknown}
		start := time.Now()
		obs, err := s.Client.Execute(ctx, a)
		if err != nil {
			return nil, err
		}
		if obs.Text() != "2" {
			return nil, fmt.Errorf("1+1 gave %q", obs.Text())
		}
		if i >= n/10 {
			d = append(d, time.Since(start))
		}
	}
	p50 := benchkit.Percentile(d, 50)
	return []benchkit.Row{
		{Metric: "start to ready with --plugins jupyter (cold server and kernel)", Value: benchkit.Ms(s.Ready)},
		{Metric: "run_ipython 1+1, warm kernel, p50 / p99", Value: benchkit.Ms(p50) + " / " + benchkit.Ms(benchkit.Percentile(d, 99)),
			Target: "p50 ≤ 20 ms", OK: benchkit.Check(p50 <= 20*time.Millisecond)},
	}, nil
}
