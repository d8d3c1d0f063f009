package executor

import (
	"context"
	"errors"
	"strings"

	"github.com/actionserver/actionserver/shell"
)

// ErrPipeOnly: cwd and env were given for a command that runs in the
// terminal, whose directory and environment are the shell's own.
var ErrPipeOnly = sentinel(KindInvalid, errors.New(`"cwd" and "env" apply to piped commands only ("pipe": true)`))

// ErrTooManyPipes: the session runs as many piped commands as it may
// (shell.DefaultMaxPipes); one must end first.
var ErrTooManyPipes = sentinel(KindLimit, shell.ErrTooManyPipes)

// StartPipe starts a command outside the session's terminal, its output on
// a pipe (see shell.Session.StartPipe), in cwd (empty: the session's
// directory) with env added to the session's environment; it returns at
// once. It runs beside the terminal's command, so it is never busy.
func (s *Session) StartPipe(ctx context.Context, command, cwd string, env map[string]string) (*Command, error) {
	if strings.TrimSpace(command) == "" {
		return nil, ErrEmptyCommand
	}
	if err := checkStartOptions(cwd, env); err != nil {
		return nil, err
	}
	c, err := s.sh.StartPipe(ctx, command, shell.PipeOptions{Dir: cwd, Env: s.e.pipeEnv(env)})
	if errors.Is(err, shell.ErrTooManyPipes) {
		return nil, ErrTooManyPipes.with(err)
	}
	if err != nil {
		// Its text goes to the client as it is, unwrapped.
		return nil, err
	}
	s.e.commands.Add(1)
	return &Command{session: s.id, c: c}, nil
}

// SignalPipe sends SIGINT, SIGTERM or SIGKILL (named as for Signal) to the
// process group of the running piped command id.
func (s *Session) SignalPipe(id int64, name string) error {
	sig, err := signalByName(name)
	if err != nil {
		return err
	}
	return controlError(s.sh.SignalPipe(id, sig))
}
