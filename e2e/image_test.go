package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/image"
)

// The runtime image end to end, without a Docker engine: a minimal Debian
// made with debootstrap is the base image, buildah builds on it and runs
// the result. scripts/deps.sh installs both; building and running images
// with buildah needs root.

// baseImage is the locally made base image. It is kept between runs (it
// takes a minute to make and never changes); the runtime images are not.
const baseImage = "localhost/action-server-e2e-base:debootstrap"

func requireImageTools(t *testing.T) image.Buildah {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("building and running images with buildah needs root")
	}
	for _, tool := range []string{"buildah", "debootstrap"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s is installed by scripts/deps.sh (make deps)", tool)
	}
	return image.Buildah{}
}

// aptSource is the Debian mirror and suite this machine's apt uses, which
// is the one a closed network lets through.
func aptSource(t *testing.T) (mirror, suite string) {
	mirror, suite = "http://deb.debian.org/debian", "bookworm"
	if f, err := os.Open("/etc/os-release"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "VERSION_CODENAME="); ok && v != "" {
				suite = strings.Trim(v, `"`)
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/etc/apt/sources.list.d/debian.sources"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "URIs:"); ok {
				if uri := strings.Fields(v); len(uri) > 0 && !strings.Contains(uri[0], "security") {
					return uri[0], suite
				}
			}
		}
	}
	return mirror, suite
}

// ensureBaseImage makes the minimal Debian base image unless it exists.
func ensureBaseImage(t *testing.T, b image.Buildah) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if ok, err := b.Exists(ctx, baseImage); err == nil && ok {
		return
	}
	mirror, suite := aptSource(t)
	root := t.TempDir()
	rootfs := filepath.Join(root, "rootfs")
	start := time.Now()
	out, err := exec.CommandContext(ctx, "debootstrap", "--variant=minbase", suite, rootfs, mirror).CombinedOutput()
	require.NoError(t, err, "debootstrap %s from %s:\n%s", suite, mirror, tail(string(out), 20))
	tarball := filepath.Join(root, "rootfs.tar")
	out, err = exec.CommandContext(ctx, "tar", "-C", rootfs, "-cf", tarball, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	ctr := buildahOut(t, ctx, "from", "scratch")
	defer exec.Command("buildah", "rm", ctr).Run()
	buildahOut(t, ctx, "add", ctr, tarball, "/")
	buildahOut(t, ctx, "config", "--cmd", "/bin/bash", ctr)
	buildahOut(t, ctx, "commit", "--format", "docker", ctr, baseImage)
	t.Logf("made base image %s (%s from %s) in %s", baseImage, suite, mirror, time.Since(start).Round(time.Second))
}

func buildahOut(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "buildah", args...).CombinedOutput()
	require.NoError(t, err, "buildah %s:\n%s", strings.Join(args, " "), tail(string(out), 20))
	return strings.TrimSpace(string(out))
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// variant writes a copy of the server binary that differs by one trailing
// byte, which the ELF loader ignores: a new binary for the same image.
func variant(t *testing.T, n int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(binDir, "action-server"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "action-server")
	require.NoError(t, os.WriteFile(path, append(data, make([]byte, n)...), 0o755))
	return path
}

func TestImage_BuildReuseRebuildAndRun(t *testing.T) {
	b := requireImageTools(t)
	ensureBaseImage(t, b)

	repo := "localhost/action-server-e2e-" + strconv.Itoa(os.Getpid())
	// Without the agent tools: the build paths are under test, not apt, and
	// build-essential alone would add minutes to each build from scratch.
	opts := image.Options{BaseImage: baseImage, Repo: repo, Version: "e2e", Binary: variant(t, 0), NoAgentTools: true}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var made []string
	t.Cleanup(func() {
		for _, ref := range made {
			exec.Command("buildah", "rmi", "-f", ref).Run()
		}
	})
	build := func(o image.Options) image.Result {
		t.Helper()
		var out strings.Builder
		res, err := image.Build(ctx, b, image.Request{Options: o, Output: &out})
		require.NoError(t, err, "build output:\n%s", tail(out.String(), 40))
		made = append(made, res.Tagged...)
		t.Logf("%s path in %s: %s", res.Path, res.Duration.Round(10*time.Millisecond), res.Image)
		return res
	}

	first := build(opts)
	assert.Equal(t, image.PathScratch, first.Path)
	for _, ref := range []string{first.Image, image.Ref(repo, first.Tags.Lock), image.Ref(repo, first.Tags.Versioned)} {
		ok, err := b.Exists(ctx, ref)
		require.NoError(t, err)
		assert.True(t, ok, "%s is tagged", ref)
	}

	t.Logf("image sizes: base %s, runtime %s", imageSize(t, ctx, baseImage), imageSize(t, ctx, first.Image))

	again := build(opts)
	assert.Equal(t, image.PathReuse, again.Path, "the same options and binary reuse the image")
	assert.Equal(t, first.Image, again.Image)

	opts.Binary = variant(t, 1)
	lock := build(opts)
	assert.Equal(t, image.PathLock, lock.Path, "a new binary only is copied onto the lock image")
	assert.Equal(t, first.Tags.Lock, lock.Tags.Lock)
	assert.NotEqual(t, first.Image, lock.Image)

	// Without the lock image, the versioned one is the starting point.
	buildahOut(t, ctx, "rmi", image.Ref(repo, first.Tags.Lock))
	opts.Binary = variant(t, 2)
	versioned := build(opts)
	assert.Equal(t, image.PathVersioned, versioned.Path)

	t.Run("actionctl build", func(t *testing.T) {
		// The command line on the same base: the first build finds none of
		// its tags (actionctl has its own version), the second reuses.
		ctlRepo := repo + "-ctl"
		args := []string{"build", "--json", "--base-image", baseImage, "--repo", ctlRepo, "--no-browser", "--no-agent-tools",
			"--builder", "buildah", "--server-binary", variant(t, 3)}
		var got []string
		for range 2 {
			out, err := exec.CommandContext(ctx, filepath.Join(binDir, "actionctl"), args...).Output()
			require.NoError(t, err, "%s", out)
			var res struct {
				Path   string
				Image  string
				Tagged []string
			}
			require.NoError(t, json.Unmarshal(out, &res), "%s", out)
			made = append(made, res.Tagged...)
			got = append(got, res.Path)
			assert.True(t, strings.HasPrefix(res.Image, ctlRepo+":as_v"), res.Image)
		}
		assert.Equal(t, []string{"scratch", "reuse"}, got)
	})

	t.Run("entrypoint", func(t *testing.T) {
		var inspect struct {
			Docker struct {
				Config struct {
					Entrypoint []string
					Cmd        []string
				} `json:"config"`
			}
		}
		raw := buildahOut(t, ctx, "inspect", "--type", "image", lock.Image)
		require.NoError(t, json.Unmarshal([]byte(raw), &inspect))
		cfg := inspect.Docker.Config
		require.Equal(t, []string{"/openhands/bin/action-server"}, cfg.Entrypoint)
		assert.Equal(t, []string{"8000", "--working-dir", "/workspace", "--username", "openhands", "--user-id", "1000", "--no-enable-browser"}, cfg.Cmd)

		// The image's own command, on a free loopback port: the container
		// shares this machine's network under chroot isolation.
		port := freePort(t)
		args := append(append([]string{}, cfg.Entrypoint...), cfg.Cmd...)
		args[1] = strconv.Itoa(port)
		c := runInImage(t, lock.Image, append(args, "--host", "127.0.0.1"), port)
		obs, err := c.Run(ctxT(t), "echo hello from $(whoami) in $PWD", client.RunOptions{Timeout: 20 * time.Second})
		require.NoError(t, err)
		assert.Equal(t, "hello from openhands in /workspace", obs.Content)
		assert.Equal(t, 0, obs.Metadata.ExitCode)
		if assert.NotNil(t, obs.Metadata.Username) {
			assert.Equal(t, "openhands", *obs.Metadata.Username)
		}

		// sudo's stderr complains that the container's host name does not
		// resolve: buildah run, unlike docker, adds no /etc/hosts entry.
		obs, err = c.Run(ctxT(t), "sudo -n true 2>/dev/null && git --version >/dev/null && echo tools ok", client.RunOptions{Timeout: 20 * time.Second})
		require.NoError(t, err)
		assert.Equal(t, "tools ok", obs.Content, "passwordless sudo and git are in the image")
	})

	t.Run("openhands launcher", func(t *testing.T) {
		// As OpenHands' DockerRuntime starts a runtime container.
		port := freePort(t)
		args := []string{"/openhands/micromamba/bin/micromamba", "run", "-n", "openhands", "poetry", "run", "python", "-u", "-m",
			"openhands.runtime.action_execution_server", strconv.Itoa(port), "--working-dir", "/workspace",
			"--username", "openhands", "--user-id", "1000", "--no-enable-browser", "--host", "127.0.0.1"}
		c := runInImage(t, versioned.Image, args, port)
		obs, err := c.Run(ctxT(t), "echo launched", client.RunOptions{Timeout: 20 * time.Second})
		require.NoError(t, err)
		assert.Equal(t, "launched", obs.Content)
	})
}

// imageSize is the size buildah reports for ref, as `buildah images` shows it.
func imageSize(t *testing.T, ctx context.Context, ref string) string {
	t.Helper()
	return buildahOut(t, ctx, "images", "--format", "{{.Size}}", ref)
}

// runInImage starts args in a new container of ref with buildah's chroot
// isolation and waits for the server in it to answer on port.
func runInImage(t *testing.T, ref string, args []string, port int) *client.Client {
	t.Helper()
	ctx := context.Background()
	ctr := buildahOut(t, ctx, "from", "--pull=never", ref)
	t.Cleanup(func() { exec.Command("buildah", "rm", ctr).Run() })
	cmd := exec.Command("buildah", append([]string{"run", "--isolation", "chroot", "--workingdir", "/openhands/code", ctr, "--"}, args...)...)
	return startProcess(t, cmd, port)
}
