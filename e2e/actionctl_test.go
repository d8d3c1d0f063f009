package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ctlRun is what one actionctl run printed and how it exited.
type ctlRun struct {
	stdout, stderr string
	code           int
}

// actionctl runs the built actionctl with args in a clean environment plus
// env, so a developer's own ACTION_SERVER_URL or SESSION_API_KEY cannot
// change results.
func actionctl(t *testing.T, env []string, args ...string) ctlRun {
	t.Helper()
	cmd := exec.CommandContext(ctxT(t), filepath.Join(binDir, "actionctl"), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := ctlRun{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		r.code = exitErr.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return r
}

func TestActionctl_APIKeyFromEnvironmentNotShownInHelp(t *testing.T) {
	const key = "help-must-not-show-this-key"
	env := []string{"SESSION_API_KEY=" + key}
	help := actionctl(t, env, "--help")
	require.Equal(t, 0, help.code, help.stderr)
	assert.Contains(t, help.stdout, "--api-key")
	assert.NotContains(t, help.stdout+help.stderr, key)
	sub := actionctl(t, env, "exec", "--help")
	assert.NotContains(t, sub.stdout+sub.stderr, key)

	// The variable is still the key's default.
	s := startServer(t, startOpts{apiKey: key})
	r := actionctl(t, env, "--url", s.URL, "exec", "echo keyed")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "keyed\n", r.stdout)
	r = actionctl(t, nil, "--url", s.URL, "exec", "echo keyed")
	assert.NotEqual(t, 0, r.code, "refused without the key")
	assert.Contains(t, r.stderr, "Invalid API Key")
	r = actionctl(t, []string{"SESSION_API_KEY=wrong"}, "--url", s.URL, "--api-key", key, "exec", "echo flag")
	assert.Equal(t, 0, r.code, "--api-key wins over the variable: %s", r.stderr)
}
