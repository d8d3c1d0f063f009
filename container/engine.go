// Package container starts the runtime image and ends it, through the
// Docker API of whichever engine answers: Docker's own, or podman's
// compatible service. It does what the OpenHands host's DockerRuntime does
// around a sandbox (launch, wait until alive, close), for users who start
// the server themselves.
package container

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// Engine is a connection to one container engine's Docker API.
type Engine struct {
	api *client.Client
	// Host is the engine's address, e.g. unix:///run/podman/podman.sock.
	Host string
}

// Candidates are the addresses Connect tries when it is given none, in
// order: $DOCKER_HOST, Docker's socket, podman's rootful socket, then
// podman's rootless one.
func Candidates() []string {
	var c []string
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		c = append(c, h)
	}
	c = append(c, "unix:///var/run/docker.sock", "unix:///run/podman/podman.sock")
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		c = append(c, "unix://"+filepath.Join(d, "podman", "podman.sock"))
	}
	return c
}

// Connect returns the first engine that answers a ping, among host when
// given, else among Candidates. The API version is negotiated, so an older
// engine (podman speaks 1.41) is spoken to in its own version.
func Connect(ctx context.Context, host string) (*Engine, error) {
	hosts := []string{host}
	if host == "" {
		hosts = Candidates()
	}
	var errs []error
	for _, h := range hosts {
		e, err := connect(ctx, h)
		if err == nil {
			return e, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no container engine answers (start docker, or podman's API with `podman system service`; or set DOCKER_HOST): %w", errors.Join(errs...))
}

func connect(ctx context.Context, host string) (*Engine, error) {
	api, err := client.New(client.WithHost(host), client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", host, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := api.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		api.Close()
		return nil, fmt.Errorf("%s: %w", host, err)
	}
	return &Engine{api: api, Host: host}, nil
}

// Close releases the connection.
func (e *Engine) Close() error { return e.api.Close() }

// Name says which engine answers: "podman" or "docker".
func (e *Engine) Name(ctx context.Context) string {
	v, err := e.api.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return "unknown"
	}
	for _, c := range v.Components {
		if strings.Contains(strings.ToLower(c.Name), "podman") {
			return "podman"
		}
	}
	return "docker"
}
