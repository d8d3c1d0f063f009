// Command report runs every benchmark scenario, prints the results table
// and writes it to bench/RESULTS.md with a description of the machine.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
)

func main() {
	quick := flag.Bool("quick", false, "fewer iterations (a smoke run)")
	out := flag.String("out", "bench/RESULTS.md", "where to write the table (empty: do not write)")
	only := flag.String("only", "", "run only scenarios whose name contains this")
	flag.Parse()
	if err := run(*quick, *out, *only); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// scenario measures one aspect and returns its rows of the table.
type scenario struct {
	name    string
	measure func(ctx context.Context, env *benchkit.Env) ([]benchkit.Row, error)
}

// scenarios lists what is measured, in table order.
func scenarios() []scenario {
	return []scenario{
		{"http floor", measureHTTPFloor},
		{"shell round trip", measureShellLatency},
		{"start-up and idle memory", measureStartup},
		{"start to first result", measureStartToFirstResult},
		{"memory after 10,000 actions", measureMemoryAfterActions},
		{"memory comes back", measureMemoryComesBack},
		{"fleet: anonymous memory after bulk output", measureAnonAfterBulkOutput},
		{"fleet: density", measureDensity},
		{"fleet: readiness flip", measureReadinessFlip},
		{"big output", measureBigOutput},
		{"pipe mode", measurePipeBulkOutput},
		{"stream", measureStream},
		{"terminal follow", measureTerminalFollow},
		{"parallel sessions", measureParallelSessions},
		{"alive under flood", measureAliveUnderFlood},
		{"file transfer", measureFileTransfer},
		{"ipython", measureIPython},
		{"browser", measureBrowser},
		{"mcp", measureMCP},
		{"upstream peer", measureUpstreamPeer},
		{"swe-rex peer", measureSwerexPeer},
		{"container", measureContainer},
		{"envd peer", measureEnvdPeer},
	}
}

func run(quick bool, outPath, only string) error {
	tmp, err := os.MkdirTemp("", "bench-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	env := &benchkit.Env{BinDir: filepath.Join(tmp, "bin"), Home: filepath.Join(tmp, "home"), Quick: quick,
		Logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }}
	if err := os.MkdirAll(env.Home, 0o755); err != nil {
		return err
	}
	for _, pkg := range []string{"./cmd/action-server", "./cmd/actionctl", "./bench/cmd/floorserver", "./bench/cmd/startfloor"} {
		cmd := filepath.Base(pkg)
		// The tags of `make build`: what ships is what is measured.
		build := exec.Command("go", "build", "-tags", "nomsgpack", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(env.BinDir, cmd), pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w\n%s", cmd, err, b)
		}
	}

	ctx := context.Background()
	var rows []benchkit.Row
	for _, s := range scenarios() {
		if only != "" && !strings.Contains(s.name, only) {
			continue
		}
		env.Logf("running %s ...", s.name)
		start := time.Now()
		r, err := s.measure(ctx, env)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		env.Logf("  %s done in %v", s.name, time.Since(start).Round(time.Millisecond))
		rows = append(rows, r...)
	}

	table := render(rows)
	fmt.Print(table)
	if outPath == "" {
		return nil
	}
	f, err := os.Create(outPath)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "# Benchmark results\n\nWritten by `make bench` on %s.\n\nMachine: %s\n\n",
		time.Now().UTC().Format("2006-01-02"), machine())
	fmt.Fprint(f, "Each row is measured in the same run as its floor: the cheapest way to do the same work on this machine. Latencies are percentiles over repeated runs; sizes are medians.\n\n")
	if _, err := io.WriteString(f, table); err != nil {
		return err
	}
	_, err = io.WriteString(f, notes)
	return err
}

// notes explain the rows whose reading is not obvious from the table.
const notes = `
Notes:

- The 64-session target is for commands that wait, as builds and tests
  mostly do: sessions then overlap. For ` + "`true`" + `, which is all CPU, 64
  sessions do 64 times the work of one on 2 cores, so about 32× one
  session's time is the floor of that row, not a fault; it has no target.
- Start-up and memory rows have no floor: nothing cheaper does the same
  work. The transfer floor is a minimal net/http server streaming the same
  bytes to and from a file.
- The MCP floor is the same echo call made directly to a second copy of
  the everything server over stdio; the proxy adds an HTTP POST, an SSE
  event and its own stdio hop. Node's memory for each MCP server is the
  server's own and is not counted in the per-server row.
- Start-up rows: the floor of the first run result is a bare interactive
  bash started on a PTY until it prints a marker; the server starts such
  a bash too. /alive is 200 once the server takes actions, which may be
  before that bash is up (actions that need it wait for it): the first
  run result includes it. The floor of /alive and of idle RSS is the
  start floor (bench/cmd/startfloor): a process that links the packages
  the server links, so the Go runtime and their initialisation run as in
  the server, then answers /alive from a one-route gin server. Its binary
  is smaller: the linker leaves out the code only the server's own work
  reaches.
- Idle RSS counts the server process only, all of its resident pages,
  its binary's code and read-only data among them (shared page cache,
  most of the binary: the kernel maps a file's cached pages around each
  one touched). The row under it shows that part (RssFile) beside the
  binary's size, for the server and for the start floor, which runs
  next to none of the code it links.
- The 64-session memory row allows 0.4 MB per session for each session's
  own state (screen, buffers) besides the output the budget bounds.
- Pipe mode runs outside the terminal (see README): its floor is seq
  writing into a pipe; terminal rows' floor is the same seq read from a
  bare bash on a PTY. The terminal rows with a floor run it and the
  server's measurement in turn, once per repetition, so a drift of the
  machine's speed during the scenario moves both. Following terminal
  output has one target, as the issue words it: SSE or a long poll
  reaches 0.9× the floor's rate.
- The "peer:" rows put the upstream Python server (openhands-ai 0.62.0's
  action_execution_server, from compat/openhands/.venv) in the floor
  column: both servers started with DockerRuntime's command line (no
  plugins, browser off) and driven by the same Go client in the same run.
  The ratio is how many times upstream is slower or bigger (for
  throughput: how many times ours is faster). Idle RSS counts the whole
  process tree, upstream's daemonised tmux server included.
- The "density" rows sum the proportional set size (PSS) of N idle
  servers started side by side: pages they share, the binary's first,
  count once across them, as a node packing sandboxes pays for them.
  "RssAnon" is a process's anonymous memory (heap, stacks), without the
  binary's pages or the page cache that holds finished output moved out
  of the heap. The readiness flip is timed from SIGTERM to the first 503
  of /readyz polled back to back.
- The "swe-rex:" rows put swe-rex 1.4.0's own swerex-remote (from
  compat/swerex/.venv) in the floor column, beside ours started as
  swerex-remote, in the same run, driven by one Go client that opens a
  connection per request as swe-rex's client does. The ratio is how many
  times upstream is slower. /is_alive is asked 5 times while another session runs
  ` + "`sleep 2`" + `: upstream answers only when the command ends.
`

func render(rows []benchkit.Row) string {
	var b strings.Builder
	b.WriteString("| metric | this server | floor | ratio | target | met |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		met := ""
		if r.OK != nil {
			met = "yes"
			if !*r.OK {
				met = "**no**"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.Metric, r.Value, dash(r.Floor), dash(r.Ratio), dash(r.Target), met)
	}
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// machine describes the CPU and core count.
func machine() string {
	model := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%d cores, %s, %s/%s, %s", runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH, runtime.Version())
}
