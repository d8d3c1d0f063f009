package serverflags

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFromLauncher_TakesTheHostsCommandLine(t *testing.T) {
	// As OpenHands' DockerRuntime builds it (a list, no shell).
	host := []string{"run", "-n", "openhands", "poetry", "run", "python", "-u", "-m",
		"openhands.runtime.action_execution_server", "31234", "--working-dir", "/workspace",
		"--plugins", "agent_skills", "jupyter", "--username", "openhands", "--user-id", "1000", "--no-enable-browser"}
	args, err := FromLauncher(host)
	require.NoError(t, err)
	assert.Equal(t, host[9:], args)

	cfg, err := Parse(args)
	require.NoError(t, err)
	assert.Equal(t, 31234, cfg.Port)
	assert.Equal(t, "/workspace", cfg.WorkDir)
	assert.Equal(t, []string{"agent_skills", "jupyter"}, cfg.Plugins)
	assert.Equal(t, "openhands", cfg.Username)
	assert.Equal(t, 1000, cfg.UserID)
	assert.False(t, cfg.EnableBrowser)

	// Another module name, as a caller may set one.
	args, err = FromLauncher([]string{"run", "-n", "x", "python", "-m", "my.server", "8000"})
	require.NoError(t, err)
	assert.Equal(t, []string{"8000"}, args)
}

func TestFromLauncher_RefusesOtherUses(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"install", "numpy"},
		{"run", "-n", "openhands", "python", "script.py"},
		{"run", "-n", "openhands", "python", "-m"},
	} {
		_, err := FromLauncher(args)
		assert.Error(t, err, "%q", args)
	}
}

func TestIsLauncher(t *testing.T) {
	assert.True(t, IsLauncher("/openhands/micromamba/bin/micromamba"))
	assert.True(t, IsLauncher("micromamba"))
	assert.False(t, IsLauncher("/openhands/bin/action-server"))
	assert.False(t, IsLauncher("micromamba-shim"))
}

func TestServerArgs_AcceptsEveryFormTheServerIsStartedIn(t *testing.T) {
	host := []string{"run", "-n", "openhands", "poetry", "run", "python", "-u", "-m",
		"openhands.runtime.action_execution_server", "31234", "--working-dir", "/workspace"}
	own := []string{"31234", "--working-dir", "/workspace"}
	for _, tc := range []struct {
		name  string
		argv0 string
		args  []string
	}{
		{"its own flags", "/openhands/bin/action-server", own},
		{"under the launcher's name", "/openhands/micromamba/bin/micromamba", host},
		{"the launcher's path as first argument", "/openhands/bin/action-server",
			append([]string{"/openhands/micromamba/bin/micromamba"}, host...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, err := ServerArgs(tc.argv0, tc.args)
			require.NoError(t, err)
			assert.Equal(t, own, args)
		})
	}
}

func TestServerArgs_RefusesTheLauncherPathWithAnotherCommand(t *testing.T) {
	_, err := ServerArgs("/openhands/bin/action-server", []string{"/openhands/micromamba/bin/micromamba", "install", "numpy"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "this launcher starts the action server")

	// A bare word is not the launcher's path: the flag parser judges it.
	args, err := ServerArgs("/openhands/bin/action-server", []string{"micromamba"})
	require.NoError(t, err)
	assert.Equal(t, []string{"micromamba"}, args)
}
