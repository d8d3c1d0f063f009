package main

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/spf13/cobra"

	"github.com/actionserver/actionserver/container"
)

func (a *app) upCmd() *cobra.Command {
	var (
		o       container.Options
		host    string
		address string
		timeout time.Duration
	)
	c := &cobra.Command{
		Use:   "up IMAGE",
		Short: "Start the runtime image in a container and wait until its server answers",
		Long: `Starts IMAGE (made by actionctl build) through the Docker API of whichever
engine answers: $DOCKER_HOST, Docker's socket, then podman's (start it with
'podman system service'). The server's port is published on 127.0.0.1 unless
--address says otherwise, with a port the engine picks unless --port does.
A random API key is generated unless --api-key gives one. When /alive
answers, the URL and the key are printed (one JSON object with --json);
'actionctl down NAME' stops and removes the container.

--locked-down runs it with no privilege at all: uid 10001 with no passwd
entry, every capability dropped, no-new-privileges, at most 512 processes,
a read-only root file system with /workspace and /tmp in memory.`,
		Example: `  actionctl up localhost/action-server-runtime:as_v1.0.0_...
  eval "$(actionctl up --json IMAGE | jq -r '"export ACTION_SERVER_URL=\(.url) SESSION_API_KEY=\(.api_key)"')"
  actionctl up --locked-down --name sandbox1 IMAGE && actionctl down sandbox1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Image = args[0]
			o.APIKey = a.apiKey
			if address != "" {
				addr, err := netip.ParseAddr(address)
				if err != nil {
					return &usageError{fmt.Errorf("--address %q: %w", address, err)}
				}
				o.Address = addr
			}
			ctx := cmd.Context()
			e, err := container.Connect(ctx, host)
			if err != nil {
				return &unavailableError{err}
			}
			defer e.Close()
			waitCtx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			s, err := e.Start(waitCtx, o)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(s)
			}
			fmt.Fprintf(a.stdout, "container: %s\nurl: %s\napi key: %s\n", s.Name, s.URL, s.APIKey)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&o.Name, "name", "", "container name (default action-server-<random>)")
	f.StringVar(&host, "engine", "", "the engine's Docker API address, e.g. unix:///run/podman/podman.sock (default: the first that answers)")
	f.StringVar(&address, "address", "127.0.0.1", "host address to publish the server's port on")
	f.IntVar(&o.HostPort, "port", 0, "host port to publish on (default: one the engine picks)")
	f.StringArrayVarP(&o.Env, "env", "e", nil, "KEY=VALUE for the container's environment (repeatable)")
	f.BoolVar(&o.LockedDown, "locked-down", false, "run with no privilege: uid 10001, no capabilities, read-only root, tmpfs /workspace and /tmp")
	f.StringVar(&o.User, "user", "", "uid[:gid] to run as (default: the image's; 10001 with --locked-down)")
	f.DurationVar(&timeout, "timeout", 2*time.Minute, "how long to wait for the server to answer")
	return c
}

func (a *app) downCmd() *cobra.Command {
	var (
		host  string
		grace time.Duration
	)
	c := &cobra.Command{
		Use:   "down NAME...",
		Short: "Stop and remove containers started by actionctl up",
		Long: `Stops each container, giving its server --grace to end its commands
(it needs at most 5 s), and removes it. A container that is already gone is
not an error.`,
		Example: `  actionctl down sandbox1
  actionctl down --grace 2s sandbox1 sandbox2`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			e, err := container.Connect(ctx, host)
			if err != nil {
				return &unavailableError{err}
			}
			defer e.Close()
			for _, name := range args {
				if err := e.Remove(ctx, name, grace); err != nil {
					return err
				}
				if !a.json {
					fmt.Fprintf(a.stdout, "removed: %s\n", name)
				}
			}
			if a.json {
				return a.printJSON(map[string][]string{"removed": args})
			}
			return nil
		},
	}
	c.Flags().StringVar(&host, "engine", "", "the engine's Docker API address (default: the first that answers)")
	c.Flags().DurationVar(&grace, "grace", 10*time.Second, "how long the server gets to stop before it is killed")
	return c
}
