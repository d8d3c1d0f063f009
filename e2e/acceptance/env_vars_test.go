package acceptance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ports of tests/runtime/test_env_vars.py. add_env_vars runs as the host
// runs it: an export line, then a ~/.bashrc append, both of which must
// exit 0 (with the jupyter plugin an IPython cell goes first).

// firstLine is the suite's obs.content.strip().split(sep)[0].strip().
func firstLine(content, sep string) string {
	return strings.TrimSpace(strings.Split(strings.TrimSpace(content), sep)[0])
}

// test_env_vars_os_environ: SANDBOX_ENV_FOOBAR=BAZ on the host becomes
// FOOBAR in the container's environment and an initial env var.
func TestEnvVars_FromHostSandboxEnv(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{sandboxEnv: []envVar{{"FOOBAR", "BAZ"}}})

		obs := rt.run(run("env"))
		t.Logf("env: %s", obs.Content)

		obs = rt.run(run("echo $FOOBAR"))
		assert.Equal(t, 0, obs.exitCode(), "The exit code should be 0. %v", obs)
		// The suite splits on "\n\r" here, "\r\n" elsewhere.
		assert.Equal(t, "BAZ", firstLine(obs.Content, "\n\r"), obs)
	})
}

// test_env_vars_runtime_operations
func TestEnvVars_AddOverwriteAndEmpty(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		rt.addEnvVars([]envVar{{"QUUX", `abc"def`}})
		obs := rt.run(run("echo $QUUX"))
		assert.True(t, obs.exitCode() == 0 && firstLine(obs.Content, "\r\n") == `abc"def`, obs)

		rt.addEnvVars([]envVar{{"FOOBAR", "xyz"}})
		obs = rt.run(run("echo $QUUX $FOOBAR"))
		assert.True(t, obs.exitCode() == 0 && firstLine(obs.Content, "\r\n") == `abc"def xyz`, obs)

		prevEnv := rt.run(run("env")).Content
		rt.addEnvVars(nil)
		currentEnv := rt.run(run("env")).Content
		assert.Equal(t, prevEnv, currentEnv)

		rt.addEnvVars([]envVar{{"QUUX", "new_value"}})
		obs = rt.run(run("echo $QUUX"))
		assert.True(t, obs.exitCode() == 0 && firstLine(obs.Content, "\r\n") == "new_value", obs)
	})
}

// test_env_vars_added_by_config
func TestEnvVars_AddedByConfig(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{startupEnv: []envVar{{"ADDED_ENV_VAR", "added_value"}}})

		obs := rt.run(run("echo $ADDED_ENV_VAR"))
		assert.True(t, obs.exitCode() == 0 && firstLine(obs.Content, "\r\n") == "added_value", obs)
	})
}

// test_docker_runtime_env_vars_persist_after_restart: pause() stops the
// container, resume() starts it again and waits for /alive. The variable
// survives only through ~/.bashrc, which the new shell must read.
func TestEnvVars_PersistAfterRestart(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		rt.addEnvVars([]envVar{{"GITHUB_TOKEN", "test_token"}})

		obs := rt.run(run("echo $GITHUB_TOKEN"))
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Equal(t, "test_token", firstLine(obs.Content, "\r\n"), obs)

		obs = rt.run(run(`grep "^export GITHUB_TOKEN=" ~/.bashrc`))
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "export GITHUB_TOKEN=", obs)

		rt.restart()

		obs = rt.run(run("echo $GITHUB_TOKEN"))
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Equal(t, "test_token", firstLine(obs.Content, "\r\n"), obs)
	})
}

// The suite's conftest loads every runtime with the agent_skills and
// jupyter plugins, so on connect add_env_vars always sends an IPython cell
// first (even for no variables), and the host raises if it gets an HTTP
// error. The bash ports above run without plugins; this one connects the
// way conftest does.
func TestConnect_WithTheSuitesPlugins(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{plugins: []string{"agent_skills", "jupyter"}})

		rt.addEnvVars([]envVar{{"QUUX", `abc"def`}})
		obs := rt.run(run("echo $QUUX"))
		require.Equal(t, "run", obs.Kind, obs)
		assert.True(t, obs.exitCode() == 0 && firstLine(obs.Content, "\r\n") == `abc"def`, obs)
	})
}
