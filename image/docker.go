package image

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

// Docker builds with `docker buildx build` against a Docker engine.
type Docker struct {
	// Binary is the docker client to run; empty means "docker" on PATH.
	Binary string
}

// Name implements Builder.
func (Docker) Name() string { return "docker" }

func (d Docker) bin() string {
	if d.Binary != "" {
		return d.Binary
	}
	return "docker"
}

// Available reports whether docker can build here: an engine answers and
// the client has buildx, which Build uses. The client alone, as on
// machines without an engine, is not enough; nor is a docker client
// pointed at podman's socket, which answers but has no buildx.
func (d Docker) Available(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if exec.CommandContext(ctx, d.bin(), "buildx", "version").Run() != nil {
		return false
	}
	return exec.CommandContext(ctx, d.bin(), "version", "--format", "{{.Server.Version}}").Run() == nil
}

// Exists implements Builder.
func (d Docker) Exists(ctx context.Context, ref string) (bool, error) {
	out, err := exec.CommandContext(ctx, d.bin(), "image", "inspect", "--format", "{{.Id}}", ref).CombinedOutput()
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		return false, nil // "No such image"
	}
	return false, fmt.Errorf("docker image inspect %s: %w: %s", ref, err, out)
}

// Build implements Builder.
func (d Docker) Build(ctx context.Context, req BuildRequest) error {
	args := []string{"buildx", "build", "--progress=plain", "--load"}
	for _, t := range req.Tags {
		args = append(args, "--tag="+t)
	}
	if req.Platform != "" {
		args = append(args, "--platform="+req.Platform)
	}
	args = append(args, buildArgFlags(req.BuildArgs)...)
	args = append(args, req.Dir)
	return runTool(ctx, req.Output, d.bin(), args...)
}

// Tag implements Builder.
func (d Docker) Tag(ctx context.Context, src, dst string) error {
	return runTool(ctx, nil, d.bin(), "tag", src, dst)
}
