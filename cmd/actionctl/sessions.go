package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/coder/websocket"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
)

// follow runs a command through the sessions API and prints its output
// live. The stream resumes by itself after a dropped connection; Ctrl-C
// sends SIGINT to the remote command (twice: give up waiting).
//
// With pipe the command runs outside the terminal (client.StartPipe).
func (a *app) follow(ctx context.Context, session, command string, pipe bool) error {
	cl := a.client()
	start, interrupt := cl.StartCommand, cl.Signal
	if pipe {
		start = func(ctx context.Context, session, command string) (*api.Command, error) {
			return cl.StartPipe(ctx, session, command, client.PipeOptions{})
		}
	}
	cmd, err := start(ctx, session, command)
	if err != nil {
		return err
	}
	if pipe {
		interrupt = func(ctx context.Context, session, signal string) error {
			return cl.SignalPipe(ctx, session, cmd.ID, signal)
		}
	}
	var interrupted atomic.Bool
	interrupts := make(chan os.Signal, 2)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		n := 0
		for range interrupts {
			n++
			if n > 1 {
				interrupted.Store(true)
				cancel()
				return
			}
			sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := interrupt(sctx, session, "SIGINT"); err != nil {
				fmt.Fprintln(a.stderr, "actionctl: interrupt:", err)
			}
			scancel()
		}
	}()

	if a.json {
		return a.followJSON(ctx, cl, session, cmd.ID, &interrupted)
	}
	if pipe {
		return a.followRaw(ctx, cl, session, cmd.ID, &interrupted)
	}
	tty := isTerminal(a.stdout)
	tailShown := false
	clearTail := func() {
		if tailShown {
			fmt.Fprint(a.stdout, "\r\x1b[K")
			tailShown = false
		}
	}
	for ev := range cl.Stream(ctx, session, cmd.ID, client.StreamOptions{}) {
		switch ev.Kind {
		case "output":
			clearTail()
			io.WriteString(a.stdout, ev.Data)
		case "tail":
			// A prompt waiting for input, or a progress line: show it on
			// a terminal, where it can be replaced.
			if tty && ev.Tail != "" && !strings.Contains(ev.Tail, "\n") {
				clearTail()
				fmt.Fprint(a.stdout, ev.Tail)
				tailShown = true
			}
		case "lost":
			clearTail()
			fmt.Fprintf(a.stderr, "actionctl: %d bytes of output were dropped by the server\n", ev.Lost)
		case "reconnect":
			fmt.Fprintf(a.stderr, "actionctl: connection lost (%v); resuming at byte %d\n", ev.Err, ev.Offset)
		case "exit":
			clearTail()
			if ev.Err != nil {
				return ev.Err
			}
			if ev.Command.ShellDied {
				fmt.Fprintln(a.stderr, "actionctl: the shell exited; the session starts a new one on the next command")
			}
			if ev.Command.ExitCode != nil {
				a.code = exitCode(*ev.Command.ExitCode)
			}
			return nil
		}
	}
	if interrupted.Load() {
		return errInterrupted
	}
	return ctx.Err()
}

// followLine is one JSON line of exec --follow --json.
type followLine struct {
	Event   string       `json:"event"` // output, lost or exit
	Offset  int64        `json:"offset"`
	Next    int64        `json:"next,omitempty"`
	Data    string       `json:"data,omitempty"`
	Lost    int64        `json:"lost,omitempty"`
	Command *api.Command `json:"command,omitempty"`
}

// followJSON is follow with --json: each event a JSON line on standard
// output, so live output and the result never mix into invalid JSON.
func (a *app) followJSON(ctx context.Context, cl *client.Client, session string, id int64, interrupted *atomic.Bool) error {
	enc := json.NewEncoder(a.stdout)
	for ev := range cl.Stream(ctx, session, id, client.StreamOptions{}) {
		var line followLine
		switch ev.Kind {
		case "output":
			line = followLine{Event: "output", Offset: ev.Offset, Next: ev.Next, Data: ev.Data}
		case "lost":
			line = followLine{Event: "lost", Offset: ev.Offset, Lost: ev.Lost}
		case "reconnect":
			fmt.Fprintf(a.stderr, "actionctl: connection lost (%v); resuming at byte %d\n", ev.Err, ev.Offset)
			continue
		case "exit":
			if ev.Err != nil {
				return ev.Err
			}
			if ev.Command.ExitCode != nil {
				a.code = exitCode(*ev.Command.ExitCode)
			}
			line = followLine{Event: "exit", Offset: ev.Offset, Command: ev.Command}
		default:
			continue // the tail is for eyes on a terminal
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	if interrupted.Load() {
		return errInterrupted
	}
	return ctx.Err()
}

func exitCode(code int) int {
	if code < 0 || code > 255 {
		return exitError
	}
	return code
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (a *app) sessionCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "session",
		Short: "Manage shell sessions (new, ls, rm)",
		Example: `  actionctl session new --id build --cwd /workspace/app
  actionctl session ls
  actionctl session rm build`,
	}
	var opts api.CreateSessionRequest
	var env []string
	newCmd := &cobra.Command{
		Use:     "new",
		Short:   "Start a shell session and print its id",
		Example: "  actionctl session new --id build --cwd /workspace/app --env CI=1",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, kv := range env {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return &usageError{fmt.Errorf("--env %q: want KEY=VALUE", kv)}
				}
				if opts.Env == nil {
					opts.Env = map[string]string{}
				}
				opts.Env[k] = v
			}
			s, err := a.client().CreateSession(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(s)
			}
			fmt.Fprintln(a.stdout, s.ID)
			return nil
		},
	}
	newCmd.Flags().StringVar(&opts.ID, "id", "", "session id (default: generated)")
	newCmd.Flags().StringVar(&opts.Cwd, "cwd", "", "starting directory (default: the workspace)")
	newCmd.Flags().StringArrayVar(&env, "env", nil, "KEY=VALUE to set in the session (repeatable)")

	lsCmd := &cobra.Command{
		Use:   "ls",
		Short: "List sessions",
		Example: `  actionctl session ls
  actionctl --json session ls`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := a.client().ListSessions(cmd.Context())
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(list)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tCWD\tRUNNING")
			for _, s := range list {
				running := "-"
				if s.RunningCommand != nil {
					running = fmt.Sprintf("#%d %s", s.RunningCommand.ID, s.RunningCommand.Command)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s.ID, s.Cwd, running)
			}
			return tw.Flush()
		},
	}
	rmCmd := &cobra.Command{
		Use:   "rm ID...",
		Short: "End sessions and every process they started",
		Example: `  actionctl session rm build
  actionctl session rm build test`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			for _, id := range args {
				if err := a.client().DeleteSession(cmd.Context(), id); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", id, err))
				}
			}
			if err := errors.Join(errs...); err != nil {
				return err
			}
			return a.printOK(map[string]any{"removed": args})
		},
	}
	root.AddCommand(newCmd, lsCmd, rmCmd)
	return root
}

func (a *app) signalCmd() *cobra.Command {
	var session string
	c := &cobra.Command{
		Use:       "signal SIGNAL",
		Short:     "Send SIGINT, SIGTERM or SIGKILL to a session's running command",
		Example:   "  actionctl signal SIGINT\n  actionctl signal --session build KILL",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"SIGINT", "SIGTERM", "SIGKILL"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.client().Signal(cmd.Context(), session, args[0]); err != nil {
				return err
			}
			return a.printOK(map[string]any{"session": session, "signal": args[0]})
		},
	}
	c.Flags().StringVar(&session, "session", client.DefaultSession, "session id")
	return c
}

// detachKey is Ctrl-], as telnet uses: it leaves the session running.
const detachKey = 0x1d

func (a *app) attachCmd() *cobra.Command {
	var session string
	c := &cobra.Command{
		Use:   "attach",
		Short: "Connect this terminal to a session's shell (Ctrl-] detaches)",
		Long: `Connects your terminal to the session's shell, in raw mode, as if you
were at its console: what you type goes to the shell, its output comes back,
and resizing your window resizes its terminal. Ctrl-] detaches and leaves
the session running. It is interactive, so --json is refused.`,
		Example: `  actionctl attach
  actionctl session new --id debug && actionctl attach --session debug`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.json {
				return &usageError{errors.New("attach is interactive and has no JSON output")}
			}
			return a.attach(cmd.Context(), session)
		},
	}
	c.Flags().StringVar(&session, "session", client.DefaultSession, "session id")
	return c
}

func (a *app) attach(ctx context.Context, session string) error {
	in := os.Stdin
	if !term.IsTerminal(int(in.Fd())) {
		return errors.New("attach needs a terminal on standard input")
	}
	conn, err := a.client().Attach(ctx, session)
	if err != nil {
		return err
	}
	defer conn.CloseNow()
	state, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return fmt.Errorf("raw mode: %w", err)
	}
	defer term.Restore(int(in.Fd()), state)
	fmt.Fprintf(a.stderr, "[attached to session %s; Ctrl-] detaches]\r\n", session)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sendSize := func() {
		if w, h, err := term.GetSize(int(in.Fd())); err == nil {
			b, _ := json.Marshal(api.AttachResize{Type: "resize", Rows: uint16(h), Cols: uint16(w)})
			_ = conn.Write(ctx, websocket.MessageText, b)
		}
	}
	sendSize()
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	go func() {
		for {
			select {
			case <-winch:
				sendSize()
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		defer cancel()
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			if err != nil {
				return
			}
			if i := strings.IndexByte(string(buf[:n]), detachKey); i >= 0 {
				if i > 0 {
					_ = conn.Write(ctx, websocket.MessageBinary, buf[:i])
				}
				return
			}
			if conn.Write(ctx, websocket.MessageBinary, buf[:n]) != nil {
				return
			}
		}
	}()
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			if ctx.Err() == nil && websocket.CloseStatus(err) == -1 {
				fmt.Fprintf(a.stderr, "\r\n[connection closed: %v]\r\n", err)
			}
			fmt.Fprint(a.stderr, "\r\n[detached]\r\n")
			return nil
		}
		if _, err := a.stdout.Write(data); err != nil {
			return err
		}
	}
}
