package container

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOpenHands_DockerRuntimeDrivesTheImage runs the unmodified OpenHands
// host's DockerRuntime of each pinned release against the runtime image,
// through podman's Docker API: it creates the container (asking for no
// entrypoint and the launcher's command line), waits for it, runs every
// kind of action and its other methods (openhands/test_docker_runtime.py).
func TestOpenHands_DockerRuntimeDrivesTheImage(t *testing.T) {
	for _, version := range []string{"0.62.0", "1.6.0"} {
		t.Run(version, func(t *testing.T) {
			setup := exec.Command(filepath.Join(env.root, "compat/openhands/setup.sh"), version)
			setup.Stderr = os.Stderr
			out, err := setup.Output()
			if code := exitCode(err); code == 3 {
				if os.Getenv("CI") != "" {
					t.Fatal("no Python 3.12 or later, and CI is set: the OpenHands host cannot run")
				}
				t.Skip("no Python 3.12 or later on this machine: the OpenHands host cannot run")
			}
			require.NoError(t, err, "compat/openhands/setup.sh %s", version)
			venv := filepath.Clean(string(trimNewline(out)))

			ctx := ctxT(t, 15*time.Minute)
			cmd := exec.CommandContext(ctx, filepath.Join(venv, "bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x")
			cmd.Dir = filepath.Join(env.root, "e2e/container/openhands")
			cmd.Env = append(os.Environ(),
				"DOCKER_HOST="+env.socket,
				"RUNTIME_IMAGE="+env.runtime,
				"E2E_NAME_PREFIX="+namePrefix,
				"HOME="+t.TempDir(),   // the host writes its settings under ~/.openhands
				"TMPDIR="+t.TempDir(), // and its port locks under the temporary directory
			)
			pytest, err := cmd.CombinedOutput()
			t.Logf("openhands-ai %s:\n%s", version, pytest)
			require.NoError(t, err)
		})
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
