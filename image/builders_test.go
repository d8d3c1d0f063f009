package image

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTool writes an executable that logs its arguments, one call a line,
// and behaves as script says (a shell fragment seeing the arguments as $@).
// No Docker engine runs on CI machines, so docker's command lines are
// checked this way; buildah's are run for real in the end-to-end test.
func fakeTool(t *testing.T, script string) (bin, log string) {
	t.Helper()
	dir := t.TempDir()
	bin, log = filepath.Join(dir, "tool"), filepath.Join(dir, "calls")
	body := "#!/bin/sh\necho \"$*\" >> " + log + "\n" + script + "\n"
	require.NoError(t, os.WriteFile(bin, []byte(body), 0o755))
	return bin, log
}

func calls(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestDocker_CommandLines(t *testing.T) {
	bin, log := fakeTool(t, `case "$1 $2" in
"image inspect") case "$5" in repo:there) echo sha256:1;; *) echo "Error: No such image: $5" >&2; exit 1;; esac;;
"version --format") echo "Cannot connect to the Docker daemon" >&2; exit 1;;
esac`)
	d := Docker{Binary: bin}
	ctx := context.Background()

	assert.False(t, d.Available(ctx), "a client without an engine is not a builder")
	ok, err := d.Exists(ctx, "repo:there")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = d.Exists(ctx, "repo:missing")
	require.NoError(t, err)
	assert.False(t, ok)

	var out strings.Builder
	require.NoError(t, d.Build(ctx, BuildRequest{
		Dir: "/ctx", Tags: []string{"r:src", "r:lock"}, Platform: "linux/amd64",
		BuildArgs: map[string]string{"B": "2", "A": "1"}, Output: &out,
	}))
	require.NoError(t, d.Tag(ctx, "r:src", "r:other"))
	assert.Equal(t, []string{
		"buildx version",
		"version --format {{.Server.Version}}",
		"image inspect --format {{.Id}} repo:there",
		"image inspect --format {{.Id}} repo:missing",
		"buildx build --progress=plain --load --tag=r:src --tag=r:lock --platform=linux/amd64 --build-arg A=1 --build-arg B=2 /ctx",
		"tag r:src r:other",
	}, calls(t, log))
}

func TestDocker_AvailableOnlyWithBuildx(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		want   bool
	}{
		{"engine and buildx", `exit 0`, true},
		// A docker client pointed at podman's socket: the engine answers,
		// buildx is an unknown command.
		{"engine without buildx", `[ "$1" = buildx ] && { echo "unknown command: docker buildx" >&2; exit 1; }; exit 0`, false},
		{"buildx without engine", `[ "$1" = version ] && { echo "Cannot connect to the Docker daemon" >&2; exit 1; }; exit 0`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, _ := fakeTool(t, tc.script)
			assert.Equal(t, tc.want, Docker{Binary: bin}.Available(context.Background()))
		})
	}
}

func TestBuildah_CommandLines(t *testing.T) {
	bin, log := fakeTool(t, `[ "$3" = inspect ] && [ "$8" != repo:there ] && { echo "image not known" >&2; exit 125; }; exit 0`)
	b := Buildah{Binary: bin, StorageDriver: "vfs"}
	ctx := context.Background()
	ok, err := b.Exists(ctx, "repo:there")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = b.Exists(ctx, "repo:missing")
	require.NoError(t, err)
	assert.False(t, ok)
	require.NoError(t, b.Build(ctx, BuildRequest{Dir: "/ctx", Tags: []string{"r:src"}}))
	require.NoError(t, b.Tag(ctx, "r:src", "r:lock"))
	assert.Equal(t, []string{
		"--storage-driver vfs inspect --type image --format {{.FromImageID}} repo:there",
		"--storage-driver vfs inspect --type image --format {{.FromImageID}} repo:missing",
		"--storage-driver vfs bud --isolation chroot --format docker --layers --pull=never --force-rm --tag r:src /ctx",
		"--storage-driver vfs tag r:src r:lock",
	}, calls(t, log))
}

func TestBuilders_FailedBuildCarriesItsLastLines(t *testing.T) {
	bin, _ := fakeTool(t, `i=0; while [ $i -lt 100 ]; do echo "step $i"; i=$((i+1)); done; echo "E: Unable to locate package nope" >&2; exit 100`)
	for _, b := range []Builder{Docker{Binary: bin}, Buildah{Binary: bin}} {
		var out strings.Builder
		err := b.Build(context.Background(), BuildRequest{Dir: "/ctx", Tags: []string{"r:t"}, Output: &out})
		require.Error(t, err, b.Name())
		msg := err.Error()
		assert.Contains(t, msg, "exit status 100")
		assert.Contains(t, msg, "step 99\nE: Unable to locate package nope", "the last lines, in order")
		assert.NotContains(t, msg, "step 79\n", "only the last lines")
		assert.Contains(t, out.String(), "step 0\n", "all output streams to the caller")
	}
}

func TestTailWriter_KeepsLastLinesAndBoundsAPartialOne(t *testing.T) {
	w := &tailWriter{max: 2}
	w.Write([]byte("a\nb\r\nc"))
	w.Write([]byte("d\ne"))
	assert.Equal(t, "b\ncd\ne", w.String())
	w.Write([]byte(strings.Repeat("x", 10000)))
	assert.LessOrEqual(t, len(w.String()), 4096+len("b\ncd\n"))
}
