// Command actionctl drives an action server from the host: wait for it,
// run commands in its shell, read, edit and move files, inspect it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/event"
)

var version = "dev"

// Exit codes besides a remote command's own.
const (
	exitError       = 1
	exitUsage       = 2
	exitAuth        = 3   // the server refused the API key
	exitUnavailable = 4   // no answer from the server, or it is not ready
	exitTimedOut    = 124 // as timeout(1): the command did not finish in time
	exitInterrupted = 130 // as a shell reports a command ended by SIGINT
)

type app struct {
	url    string
	apiKey string
	json   bool
	stdout io.Writer
	stderr io.Writer
	code   int // exit code decided by a command
}

func main() {
	a := &app{stdout: os.Stdout, stderr: os.Stderr}
	// No SIGINT handler here: Ctrl-C ends actionctl as usual, except
	// where a command handles it (exec --follow forwards it).
	root := a.rootCmd()
	if err := root.ExecuteContext(context.Background()); err != nil {
		a.printError(err)
		os.Exit(exitCodeOf(err))
	}
	os.Exit(a.code)
}

type usageError struct{ error }

// unavailableError is a server that did not become ready in time.
type unavailableError struct{ error }

func (e *unavailableError) Unwrap() error { return e.error }

// exitCodeOf tells scripts what kind of failure err is.
func exitCodeOf(err error) int {
	var usageErr *usageError
	var unavailable *unavailableError
	var netErr *net.OpError
	switch {
	case errors.As(err, &usageErr):
		return exitUsage
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	case errors.Is(err, client.ErrUnauthorized):
		return exitAuth
	case errors.As(err, &unavailable), errors.Is(err, client.ErrNotReady), errors.As(err, &netErr):
		// A network error means no answer: nothing listens, or the
		// connection broke.
		return exitUnavailable
	}
	return exitError
}

// errInterrupted ends a command the user gave up on with Ctrl-C.
var errInterrupted = errors.New("interrupted")

// printError reports a failed command. With --json it goes to standard
// output as {"error": ..., "status": N, "code": C}, so that what a script
// reads there is JSON whether the command worked or not; status is the
// server's HTTP status, 0 when there was no answer, and code the error's
// machine-readable code, when the server sent one.
func (a *app) printError(err error) {
	if !a.json {
		fmt.Fprintln(a.stderr, "actionctl:", err)
		return
	}
	status, code := 0, ""
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		status, code = apiErr.StatusCode, apiErr.Code
	}
	b, jerr := json.Marshal(struct {
		Error  string `json:"error"`
		Status int    `json:"status"`
		Code   string `json:"code,omitempty"`
	}{err.Error(), status, code})
	if jerr != nil {
		fmt.Fprintln(a.stderr, "actionctl:", err)
		return
	}
	fmt.Fprintln(a.stdout, string(b))
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "actionctl",
		Short:         "Drive an action server from the host",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Long: `actionctl drives an action server from the host.

Exit codes:
  0    success
  1    error (the server refused the request, an action failed, ...)
  2    usage error
  3    the server refused the API key (--api-key, $SESSION_API_KEY)
  4    the server is unreachable, or not ready (wait: not ready in time)
  124  exec: the command is still running (without --follow)
  130  interrupted
exec exits with the remote command's own exit code, which may be any of
these; with --json its output tells them apart.

With --json, every command prints exactly one JSON document on standard
output: its result (the server's answer, or {"ok": true} for commands
that have nothing else to say), or, when it fails, {"error": "...",
"status": N, "code": "..."} where N is the server's HTTP status (0 when
there was none) and code the error's code, when the server sent one.
The streams are JSON lines instead: one object per event for watch and
exec --follow, the last one being the result or the error. attach is
interactive and refuses --json; help, completion and --version ignore it.`,
		Example: `  actionctl wait
  actionctl exec 'ls -la'
  actionctl exec --follow 'make test'
  actionctl session new --id build && actionctl exec --follow --session build 'npm ci'
  actionctl upload ./repo /workspace && actionctl ls repo
  actionctl edit str_replace /workspace/repo/main.go 'old' 'new'
  ACTION_SERVER_URL=http://10.0.0.5:31000 SESSION_API_KEY=secret actionctl info`,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.PersistentFlags().StringVar(&a.url, "url", envOr("ACTION_SERVER_URL", "http://127.0.0.1:8000"), "server URL ($ACTION_SERVER_URL)")
	// The key's default stays empty so --help never prints a secret;
	// client() falls back to $SESSION_API_KEY.
	root.PersistentFlags().StringVar(&a.apiKey, "api-key", "", "session API key (default $SESSION_API_KEY)")
	root.PersistentFlags().BoolVar(&a.json, "json", false, "print one JSON document (JSON lines for streams), errors included")
	root.AddCommand(a.waitCmd(), a.execCmd(), a.infoCmd(), a.sessionCmd(), a.signalCmd(), a.attachCmd(), a.browseCmd(),
		a.readCmd(), a.writeCmd(), a.editCmd(), a.uploadCmd(), a.downloadCmd(), a.cpCmd(), a.lsCmd(), a.watchCmd(), a.ipythonCmd(), a.mcpCmd(), a.buildCmd(), a.upCmd(), a.downCmd())
	usageArgs(root)
	return root
}

// usageArgs makes wrong arguments, unknown subcommands included, a usage
// error (exit 2) in c and every command below it.
func usageArgs(c *cobra.Command) {
	if c.HasSubCommands() && !c.Runnable() {
		// cobra answers an unknown subcommand of a group that cannot run
		// with its help and success, or with a plain error; a group that
		// runs to show its help lets NoArgs refuse it.
		c.Args = cobra.NoArgs
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return &usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

func (a *app) client() *client.Client {
	key := a.apiKey
	if key == "" {
		key = os.Getenv("SESSION_API_KEY")
	}
	return client.New(a.url, client.WithAPIKey(key))
}

func (a *app) waitCmd() *cobra.Command {
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "wait",
		Short: "Wait until the server is ready to execute actions",
		Example: `  actionctl wait
  actionctl wait --timeout 30s && actionctl exec 'make test'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			if err := a.client().WaitUntilAlive(ctx); err != nil {
				return &unavailableError{err}
			}
			return a.printOK(nil)
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "give up after this long")
	return c
}

func (a *app) execCmd() *cobra.Command {
	var opts client.RunOptions
	var followOut, pipe bool
	var session string
	c := &cobra.Command{
		Use:   "exec COMMAND",
		Short: "Run a command in the server's shell and exit with its exit code",
		Long: `Runs COMMAND in the server's persistent shell, prints its output, and exits
with its exit code. If the command has not finished when the wait ends (no
new output for the server's no-change timeout, or --timeout), it keeps
running; actionctl exits with 124. Run 'actionctl exec ""' to fetch more
of its output, or 'actionctl exec --input C-c' to interrupt it.

With --json, exec prints the run observation; exec --follow prints JSON
lines: {"event":"output","offset":N,"next":M,"data":"..."} for each piece
of output, {"event":"lost","offset":N,"lost":K} when the server dropped K
bytes before offset N, and last {"event":"exit","command":{...}} with the
command's final state (or an {"error":...} object). Notes about dropped
connections go to standard error.

--pipe runs COMMAND outside the terminal, by bash -c in the session's
directory and environment, its output and errors on a pipe, and follows it
as --follow does: many times faster for bulk output (builds, logs, data),
but what it changes (cd, variables) does not persist, and programs see no
terminal (no colours, no progress bars, no input).`,
		Example: `  actionctl exec 'make test'
  actionctl exec --timeout 10m --blocking 'npm ci'
  actionctl exec --input C-c
  actionctl exec --follow 'pytest -x'    # live output; Ctrl-C interrupts the remote command
  actionctl exec --pipe 'cat big.log'    # bulk output, outside the terminal`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if followOut || pipe {
				return a.follow(cmd.Context(), session, args[0], pipe)
			}
			if session != client.DefaultSession {
				return &usageError{errors.New("--session needs --follow or --pipe (run actions use the default session)")}
			}
			obs, err := a.client().Run(cmd.Context(), args[0], opts)
			if err != nil {
				var oe *client.ObservationError
				if errors.As(err, &oe) {
					a.code = exitError
					if a.json {
						return a.printJSON(oe.Observation)
					}
					fmt.Fprintln(a.stderr, oe.Observation.Text())
					return nil
				}
				return err
			}
			if a.json {
				a.code = obsExitCode(obs.Metadata.ExitCode)
				return a.printJSON(obs)
			}
			m := obs.Metadata
			if m.Prefix != "" {
				fmt.Fprint(a.stderr, m.Prefix)
			}
			if obs.Content != "" {
				fmt.Fprintln(a.stdout, obs.Content)
			}
			if m.ExitCode == -1 || m.Suffix != fmt.Sprintf("\n[The command completed with exit code %d.]", m.ExitCode) {
				fmt.Fprintln(a.stderr, trimNewlines(m.Suffix))
			}
			a.code = obsExitCode(m.ExitCode)
			return nil
		},
	}
	c.Flags().DurationVar(&opts.Timeout, "timeout", 0, "hard timeout (0: none, the no-change timeout applies)")
	c.Flags().BoolVar(&opts.Blocking, "blocking", false, "wait for completion regardless of the no-change timeout")
	c.Flags().BoolVar(&opts.IsInput, "input", false, "send COMMAND as input to the running command (C-c etc. as keys)")
	c.Flags().BoolVar(&opts.Static, "static", false, "run in a fresh shell")
	c.Flags().BoolVarP(&followOut, "follow", "f", false, "stream the output live until the command ends (resumes after dropped connections)")
	c.Flags().BoolVar(&pipe, "pipe", false, "run outside the terminal, output on a pipe (fast bulk output; implies --follow)")
	c.Flags().StringVar(&session, "session", client.DefaultSession, "session to run in (with --follow or --pipe)")
	return c
}

func (a *app) infoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "Print the server's uptime, idle time and resource use",
		Example: `  actionctl info
  actionctl --url http://10.0.0.5:31000 info`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, err := a.client().ServerInfo(cmd.Context())
			if err != nil {
				return err
			}
			return a.printJSON(info)
		},
	}
}

// printOK prints {"ok": true} and the fields of extra: the --json result of
// a command whose only answer is that it worked. Without --json it prints
// nothing.
func (a *app) printOK(extra map[string]any) error {
	if !a.json {
		return nil
	}
	out := map[string]any{"ok": true}
	for k, v := range extra {
		out[k] = v
	}
	return a.printJSON(out)
}

func (a *app) printJSON(v any) error {
	if o, ok := v.(event.Observation); ok {
		b, err := event.EncodeObservation(o)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(a.stdout, string(b))
		return err
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// obsExitCode maps a run observation's exit code to actionctl's: -1 (still
// running) becomes 124.
func obsExitCode(code int) int {
	if code == -1 {
		return exitTimedOut
	}
	return exitCode(code)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func trimNewlines(s string) string {
	for len(s) > 0 && s[0] == '\n' {
		s = s[1:]
	}
	return s
}
