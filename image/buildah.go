package image

import (
	"context"
	"fmt"
	"os/exec"
)

// Buildah builds with `buildah bud`, which needs no engine. It always uses
// chroot isolation, the one that works inside an unprivileged container or
// a sandbox without user namespaces.
type Buildah struct {
	// Binary is the buildah to run; empty means "buildah" on PATH.
	Binary string
	// StorageDriver, when set, is passed as --storage-driver ("vfs" where
	// overlay cannot be mounted).
	StorageDriver string
}

// Name implements Builder.
func (Buildah) Name() string { return "buildah" }

func (b Buildah) bin() string {
	if b.Binary != "" {
		return b.Binary
	}
	return "buildah"
}

// Available reports whether buildah is installed.
func (b Buildah) Available() bool {
	_, err := exec.LookPath(b.bin())
	return err == nil
}

func (b Buildah) global(args ...string) []string {
	if b.StorageDriver != "" {
		return append([]string{"--storage-driver", b.StorageDriver}, args...)
	}
	return args
}

// Exists implements Builder.
func (b Buildah) Exists(ctx context.Context, ref string) (bool, error) {
	out, err := exec.CommandContext(ctx, b.bin(), b.global("inspect", "--type", "image", "--format", "{{.FromImageID}}", ref)...).CombinedOutput()
	if err == nil {
		return true, nil
	}
	if exitCode(err) > 0 {
		return false, nil // "image not known"
	}
	return false, fmt.Errorf("buildah inspect %s: %w: %s", ref, err, out)
}

// Build implements Builder. The Docker image format keeps what OCI's
// cannot say (a HEALTHCHECK, SHELL) and is what docker would produce.
// --force-rm: a failed step leaves no working container (and its mount)
// behind.
func (b Buildah) Build(ctx context.Context, req BuildRequest) error {
	args := b.global("bud", "--isolation", "chroot", "--format", "docker", "--layers", "--pull=never", "--force-rm")
	for _, t := range req.Tags {
		args = append(args, "--tag", t)
	}
	if req.Platform != "" {
		args = append(args, "--platform", req.Platform)
	}
	args = append(args, buildArgFlags(req.BuildArgs)...)
	args = append(args, req.Dir)
	return runTool(ctx, req.Output, b.bin(), args...)
}

// Tag implements Builder.
func (b Buildah) Tag(ctx context.Context, src, dst string) error {
	return runTool(ctx, nil, b.bin(), b.global("tag", src, dst)...)
}
