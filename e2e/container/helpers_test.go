package container

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
	engine "github.com/actionserver/actionserver/container"
)

// uniqueName is a container name TestMain knows to clean up.
func uniqueName(t *testing.T) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return namePrefix + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())) + "-" + hex.EncodeToString(b)
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// connect opens podman's Docker API, as `actionctl up` does.
func connect(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := engine.Connect(ctxT(t, 30*time.Second), env.socket)
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

// startSandbox starts a container of o.Image (the runtime image when
// empty) through podman's Docker API, waits for its server, and removes
// it when the test ends.
func startSandbox(t *testing.T, o engine.Options) (*engine.Sandbox, *client.Client) {
	t.Helper()
	if o.Image == "" {
		o.Image = env.runtime
	}
	if o.Name == "" {
		o.Name = uniqueName(t)
	}
	e := connect(t)
	s, err := e.Start(ctxT(t, 2*time.Minute), o)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if t.Failed() {
			if out, err := podmanCmd(ctx, "logs", "--tail", "40", s.Name).CombinedOutput(); err == nil {
				t.Logf("container %s's last lines:\n%s", s.Name, out)
			}
		}
		if err := e.Remove(ctx, s.ID, 10*time.Second); err != nil {
			t.Errorf("remove %s: %v", s.Name, err)
		}
	})
	return s, client.New(s.URL, client.WithAPIKey(s.APIKey))
}

// run runs a command in the sandbox's shell and requires it to succeed.
func run(t *testing.T, c *client.Client, command string) string {
	t.Helper()
	obs, err := c.Run(ctxT(t, 3*time.Minute), command, client.RunOptions{Timeout: 120 * time.Second})
	require.NoError(t, err, command)
	require.Equal(t, 0, obs.Metadata.ExitCode, "%s:\n%s", command, obs.Content)
	return obs.Content
}

// containerLogs is everything the container printed.
func containerLogs(t *testing.T, name string) string {
	t.Helper()
	out, err := podmanCmd(ctxT(t, 30*time.Second), "logs", name).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}
