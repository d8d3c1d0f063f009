package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/bench/internal/benchkit"
)

// TestSoak_Short is the CI-sized soak: a few clients for a few seconds,
// browser included. make soak runs the long one.
func TestSoak_Short(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and Chromium")
	}
	tmp := t.TempDir()
	env := &benchkit.Env{BinDir: filepath.Join(tmp, "bin"), Home: filepath.Join(tmp, "home"), Logf: t.Logf}
	require.NoError(t, os.MkdirAll(env.Home, 0o755))
	build := exec.Command("go", "build", "-o", filepath.Join(env.BinDir, "action-server"), "../../../cmd/action-server")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	r, err := soak(context.Background(), env, soakConfig{Duration: 8 * time.Second, Clients: 4, Browser: true, Logf: t.Logf})
	require.NoError(t, err)
	t.Logf("ops %v; runtime %+v → %+v", r.Ops, r.Baseline.Runtime, r.After.Runtime)
	assert.Empty(t, r.Errors)
	assert.Empty(t, r.Leaks)
	for _, k := range []string{"run", "session", "file", "transfer", "browse"} {
		assert.Positive(t, r.Ops[k], k)
	}
}
