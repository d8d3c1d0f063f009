// Package runtimeimage makes what the end-to-end tests run under a real
// engine: the container tools (scripts/container-deps.sh), the binaries, a
// local Debian base image (scripts/container-base.sh) and the runtime
// image `actionctl build` makes on it with buildah. Both e2e/container and
// e2e/kube use it, so that they run the same image.
package runtimeimage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Repo is where the test images go.
const Repo = "localhost/action-server-e2e"

// Tools are the container tools, installed.
type Tools struct {
	Root   string // the checkout
	Podman string // podman 5.6.2, which runs and saves everything
	Conf   string // the containers.conf podman needs here (CONTAINERS_CONF)
}

// Install runs scripts/container-deps.sh in the checkout root, and sets
// the environment podman needs in this process, for podman and buildah
// started later.
func Install(root string) (Tools, error) {
	vars, err := ScriptVars(exec.Command(filepath.Join(root, "scripts/container-deps.sh")))
	if err != nil {
		return Tools{}, fmt.Errorf("install the container tools: %w", err)
	}
	t := Tools{Root: root, Podman: vars["PODMAN_API"], Conf: vars["CONTAINERS_CONF"]}
	os.Setenv("CONTAINERS_CONF", t.Conf)
	os.Setenv("PODMAN_IGNORE_CGROUPSV1_WARNING", "1")
	return t, nil
}

// ScriptVars runs a script that prints KEY=VALUE lines and returns them.
func ScriptVars(cmd *exec.Cmd) (map[string]string, error) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", cmd.Path, err, stderr.String())
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	return vars, nil
}

// BuildBinaries builds action-server and actionctl into dir.
func (t Tools) BuildBinaries(dir string) error {
	for _, cmd := range []string{"action-server", "actionctl"} {
		// A fixed version keeps the image tags stable across commits, so a
		// changed binary only takes the lock path (a new top layer).
		build := exec.Command("go", "build", "-tags", "nomsgpack", "-trimpath", "-ldflags", "-X main.version=e2e", "-o", filepath.Join(dir, cmd), "./cmd/"+cmd)
		build.Dir = t.Root
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w\n%s", cmd, err, out)
		}
	}
	return nil
}

// BaseImage makes (or reuses) a local Debian image with the packages.
func (t Tools) BaseImage(name string, pkgs ...string) (string, error) {
	cmd := exec.Command(filepath.Join(t.Root, "scripts/container-base.sh"), append([]string{name}, pkgs...)...)
	cmd.Env = append(os.Environ(), "PODMAN="+t.Podman)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("base image %s: %w\n%s", name, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// BuildImage runs actionctl (from BuildBinaries' dir) `build` on base with
// buildah, which shares podman's store, and returns the image it names.
func BuildImage(actionctl, base string, flags ...string) (string, error) {
	args := append([]string{"build", "--json", "--builder", "buildah", "--base-image", base, "--repo", Repo}, flags...)
	cmd := exec.Command(actionctl, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tail := stderr.String()
		if len(tail) > 4000 {
			tail = tail[len(tail)-4000:]
		}
		return "", fmt.Errorf("actionctl build on %s: %w\n%s", base, err, tail)
	}
	var res struct{ Image string }
	if err := json.Unmarshal(out, &res); err != nil || res.Image == "" {
		return "", fmt.Errorf("actionctl build: no image in %q: %v", out, err)
	}
	return res.Image, nil
}
