// Command soak drives an action server with concurrent clients for a while
// and fails if any answer was wrong or if the server did not return to its
// baseline of goroutines, descriptors, children and memory afterwards.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
)

func main() {
	duration := flag.Duration("duration", 30*time.Second, "how long the clients run")
	clients := flag.Int("clients", 8, "concurrent clients")
	browser := flag.Bool("browser", true, "mix in browser actions (needs Chromium)")
	flag.Parse()
	if err := run(*duration, *clients, *browser); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func run(duration time.Duration, clients int, browser bool) error {
	tmp, err := os.MkdirTemp("", "soak-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	env := &benchkit.Env{BinDir: filepath.Join(tmp, "bin"), Home: filepath.Join(tmp, "home")}
	if err := os.MkdirAll(env.Home, 0o755); err != nil {
		return err
	}
	build := exec.Command("go", "build", "-o", filepath.Join(env.BinDir, "action-server"), "./cmd/action-server")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build: %w\n%s", err, b)
	}
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	r, err := soak(context.Background(), env, soakConfig{Duration: duration, Clients: clients, Browser: browser, Logf: logf})
	if err != nil {
		return err
	}
	kinds := make([]string, 0, len(r.Ops))
	total := int64(0)
	for k, n := range r.Ops {
		kinds = append(kinds, k)
		total += n
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Printf("%-9s %7d ops\n", k, r.Ops[k])
	}
	fmt.Printf("total     %7d ops in %v (%.0f/s)\n", total, duration, float64(total)/duration.Seconds())
	fmt.Printf("baseline  %+v\nafter     %+v\n", r.Baseline.Runtime, r.After.Runtime)
	for _, e := range r.Errors {
		fmt.Println("error:", e)
	}
	for _, l := range r.Leaks {
		fmt.Println("leak:", l)
	}
	if len(r.Errors) > 0 || len(r.Leaks) > 0 {
		return fmt.Errorf("%d errors, %d leaks", len(r.Errors), len(r.Leaks))
	}
	return nil
}
