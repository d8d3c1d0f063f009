package image

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a Builder that keeps images as a set of names and records
// every call, so the decision tree can be checked without a real builder.
type recorder struct {
	images map[string]string // ref → the Dockerfile it was built from ("" for pre-existing)
	calls  []string
	builds []BuildRequest
	files  []string // the context's files at each build
	fail   error
}

func newRecorder(existing ...string) *recorder {
	r := &recorder{images: map[string]string{}}
	for _, ref := range existing {
		r.images[ref] = ""
	}
	return r
}

func (r *recorder) Name() string { return "recorder" }

func (r *recorder) Exists(_ context.Context, ref string) (bool, error) {
	r.calls = append(r.calls, "exists "+ref)
	_, ok := r.images[ref]
	return ok, nil
}

func (r *recorder) Build(_ context.Context, req BuildRequest) error {
	r.calls = append(r.calls, "build "+strings.Join(req.Tags, " "))
	r.builds = append(r.builds, req)
	if r.fail != nil {
		return r.fail
	}
	df, err := os.ReadFile(filepath.Join(req.Dir, dockerfileName))
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(req.Dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	r.files = append(r.files, strings.Join(names, " "))
	for _, t := range req.Tags {
		r.images[t] = string(df)
	}
	return nil
}

func (r *recorder) Tag(_ context.Context, src, dst string) error {
	r.calls = append(r.calls, "tag "+src+" "+dst)
	r.images[dst] = r.images[src]
	return nil
}

// testBinary is a static ELF binary to bake in: this test's own binary
// will not do (it may be dynamically linked), so TestMain builds a tiny one.
func testBinary(t *testing.T) string {
	t.Helper()
	return testBinaryPath
}

func request(t *testing.T) Request {
	return Request{Options: Options{
		BaseImage: "debian:bookworm", Repo: "localhost/rt", Version: "1.0", Binary: testBinary(t),
	}}
}

func TestBuild_DecisionTree(t *testing.T) {
	r := request(t)
	tags, err := Plan(t.TempDir(), r.Options)
	require.NoError(t, err)
	source, lock, versioned := Ref("localhost/rt", tags.Source), Ref("localhost/rt", tags.Lock), Ref("localhost/rt", tags.Versioned)

	tests := []struct {
		name     string
		existing []string
		force    bool
		path     Path
		from     string
		tagged   []string
	}{
		{"nothing exists: from the base image, all three tags", nil, false, PathScratch, "debian:bookworm", []string{source, lock, versioned}},
		{"source exists: reused", []string{source, lock, versioned}, false, PathReuse, "", []string{source}},
		{"lock exists: only the binary, the lock tag stays put", []string{lock, versioned}, false, PathLock, lock, []string{source}},
		{"versioned exists: features again, lock tag added", []string{versioned}, false, PathVersioned, versioned, []string{source, lock}},
		{"force: from the base image even when all exist", []string{source, lock, versioned}, true, PathScratch, "debian:bookworm", []string{source}},
		{"force with nothing: all three tags", nil, true, PathScratch, "debian:bookworm", []string{source, lock, versioned}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newRecorder(tt.existing...)
			req := r
			req.Force = tt.force
			res, err := Build(context.Background(), b, req)
			require.NoError(t, err)
			assert.Equal(t, tt.path, res.Path)
			assert.Equal(t, tt.from, res.From)
			assert.Equal(t, tt.tagged, res.Tagged)
			assert.Equal(t, source, res.Image)
			seen := map[string]bool{}
			for _, c := range b.calls {
				if ref, ok := strings.CutPrefix(c, "exists "); ok {
					assert.False(t, seen[ref], "the builder is asked about %s once", ref)
					seen[ref] = true
				}
			}
			if tt.path == PathReuse {
				assert.Empty(t, b.builds, "nothing is built")
				return
			}
			require.Len(t, b.builds, 1)
			assert.Equal(t, tt.tagged, b.builds[0].Tags)
			assert.NotEmpty(t, b.builds[0].BuildArgs["ACTION_SERVER_BUILD_TIME"])
			df := b.images[source]
			assert.True(t, strings.HasPrefix(df, "# Rendered by actionctl build 1.0"), df)
			assert.Contains(t, df, "\nFROM "+tt.from+"\n")
			assert.Equal(t, tt.path == PathLock, !strings.Contains(df, "RUN "), "only the lock path has no RUN")
			assert.Equal(t, "Dockerfile action-server", b.files[0])
		})
	}
}

func TestBuild_SecondBuildReusesAndAChangedBinaryTakesTheLockPath(t *testing.T) {
	b := newRecorder()
	r := request(t)
	first, err := Build(context.Background(), b, r)
	require.NoError(t, err)
	require.Equal(t, PathScratch, first.Path)

	again, err := Build(context.Background(), b, r)
	require.NoError(t, err)
	assert.Equal(t, PathReuse, again.Path)
	assert.Equal(t, first.Image, again.Image)

	// Another binary: the same lock, another source.
	other := filepath.Join(t.TempDir(), "action-server")
	data, err := os.ReadFile(r.Binary)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(other, append(data, 0), 0o755))
	r.Binary = other
	third, err := Build(context.Background(), b, r)
	require.NoError(t, err)
	assert.Equal(t, PathLock, third.Path)
	assert.Equal(t, first.Tags.Lock, third.Tags.Lock)
	assert.NotEqual(t, first.Image, third.Image)
	assert.Len(t, b.builds, 2)
}

func TestBuild_FailureSaysWhatWasBuilt(t *testing.T) {
	b := newRecorder()
	b.fail = errors.New("buildah bud: exit status 1; last lines:\nE: Unable to locate package nope")
	_, err := Build(context.Background(), b, request(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "from debian:bookworm (scratch path) with recorder")
	assert.Contains(t, err.Error(), "Unable to locate package nope")
}

func TestBuild_KeepsTheContextWhenAsked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ctx")
	r := request(t)
	r.ContextDir = dir
	r.Plugins = []string{"vscode"}
	_, err := Build(context.Background(), newRecorder(), r)
	require.NoError(t, err)
	for _, name := range []string{dockerfileName, binaryName, codeServerName} {
		assert.FileExists(t, filepath.Join(dir, name))
	}
	fi, err := os.Stat(filepath.Join(dir, binaryName))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm())
}

func TestPlan_RefusesADynamicOrForeignBinary(t *testing.T) {
	o := request(t).Options
	o.Binary = "/bin/sh" // dynamically linked on every Debian
	_, err := Plan(t.TempDir(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is dynamically linked")

	o.Binary = testBinary(t)
	other := "linux/arm64"
	if runtime.GOARCH == "arm64" {
		other = "linux/amd64"
	}
	o.Platform = other
	_, err = Plan(t.TempDir(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not for platform "+other)

	o.Binary = filepath.Join(t.TempDir(), "missing")
	o.Platform = ""
	_, err = Plan(t.TempDir(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing")
}
