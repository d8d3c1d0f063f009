package client

import (
	"context"

	"github.com/actionserver/actionserver/api"
)

// PipeOptions adjust a piped command (StartPipe).
type PipeOptions struct {
	// Cwd is where it starts; empty means the session's directory.
	Cwd string
	// Env adds variables to the session's environment.
	Env map[string]string
}

// StartPipe starts a command outside the session's terminal, with its
// output and errors on a pipe, and returns at once. Much faster than
// StartCommand for bulk output; nothing it changes (cd, variables)
// persists, and programs see no terminal. Its output is read as any
// command's is (Output, Stream).
func (c *Client) StartPipe(ctx context.Context, session, command string, o PipeOptions) (*api.Command, error) {
	body := api.StartCommandRequest{Command: command, Pipe: true, Cwd: o.Cwd, Env: o.Env}
	var cmd api.Command
	if err := c.postJSON(ctx, sessionPath(session, "commands"), body, &cmd); err != nil {
		return nil, err
	}
	return &cmd, nil
}

// SignalPipe sends SIGINT, SIGTERM or SIGKILL to a running piped command's
// process group.
func (c *Client) SignalPipe(ctx context.Context, session string, id int64, signal string) error {
	return c.postJSON(ctx, sessionPath(session, "signal"), api.SignalRequest{Signal: signal, Command: &id}, nil)
}
