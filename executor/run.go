package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/actionserver/actionserver/event"
	"github.com/actionserver/actionserver/shell"
	"github.com/actionserver/actionserver/shell/ohrun"
)

// run executes a "run" action on the default shell, or on a fresh one for
// is_static.
func (e *Executor) run(ctx context.Context, a *event.CmdRun) (event.Observation, error) {
	sh, err := e.shell(ctx, DefaultSession)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return nil, err
		}
		// A shell that could not start (its start-up files hang, say)
		// is something the agent is told, as for a command that failed.
		return e.runFailed(a, err)
	}
	sess := e.runner(sh)
	if a.IsStatic {
		dir := e.workDir()
		if a.Cwd != nil && *a.Cwd != "" {
			dir = *a.Cwd
		}
		s, err := shell.Start(ctx, e.shellOptions(dir))
		if err != nil {
			return e.runFailed(a, fmt.Errorf("start a shell for a static command: %w", err))
		}
		// Upstream leaves static shells running forever; one per action
		// would leak, so it ends with the action.
		defer closeShell(context.Background(), s, time.Second)
		sess = ohrun.New(s, e.opts.Run)
	}

	if !a.IsInput {
		e.commands.Add(1)
	}
	res, err := sess.Run(ctx, ohrun.Request{
		Command:  a.Command,
		IsInput:  a.IsInput,
		Blocking: a.Blocking,
		Timeout:  a.HardTimeout(),
		Hidden:   a.Hidden,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return e.runFailed(a, err)
	}
	return cmdOutput(res), nil
}

// runFailed reports a failure to run a command. The host needs a "run"
// observation for hidden actions (it adds a key only that type accepts), so
// those get one; others get an "error" observation, as upstream.
func (e *Executor) runFailed(a *event.CmdRun, err error) (event.Observation, error) {
	var multi *shell.MultipleCommandsError
	if !errors.As(err, &multi) {
		e.log.Error("run command", "error", err)
	}
	if a.Hidden {
		return &event.CmdOutput{Content: err.Error(), Command: a.Command,
			Metadata: event.DefaultCmdMetadata(), Hidden: true}, nil
	}
	return &event.ErrorObservation{Content: err.Error()}, nil
}

func cmdOutput(r ohrun.Result) *event.CmdOutput {
	m := event.DefaultCmdMetadata()
	if r.Finished {
		m = event.CmdMetadata{
			ExitCode:          r.Metadata.ExitCode,
			PID:               r.Metadata.PID,
			Username:          event.StrPtr(r.Metadata.Username),
			Hostname:          event.StrPtr(r.Metadata.Hostname),
			WorkingDir:        event.StrPtr(r.Metadata.WorkingDir),
			PyInterpreterPath: event.StrPtr(r.Metadata.PyInterpreterPath),
		}
	}
	m.Prefix, m.Suffix = r.Prefix, r.Suffix
	return &event.CmdOutput{Content: r.Content, Command: r.Command, Metadata: m, Hidden: r.Hidden}
}
