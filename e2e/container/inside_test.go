package container

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
	engine "github.com/actionserver/actionserver/container"
	"github.com/actionserver/actionserver/event"
)

func TestImage_TheAgentsUsualToolsAreThere(t *testing.T) {
	_, c := startSandbox(t, engine.Options{})
	for _, tool := range []string{
		"python --version", "rg --version", "curl --version", "ps --version", "pkill --version",
		"make --version", "gcc --version", "git --version", "pip --version",
	} {
		t.Run(strings.Fields(tool)[0], func(t *testing.T) {
			run(t, c, tool)
		})
	}
}

func TestPID1_ReapsOrphans(t *testing.T) {
	_, c := startSandbox(t, engine.Options{})
	// Each subshell exits at once, leaving its sleep to PID 1.
	run(t, c, `for i in $(seq 200); do (sleep 0.2 &) ; done; sleep 2`)
	out := run(t, c, `ps -o pid=,ppid=,stat=,comm= -e`)
	var zombies []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && strings.HasPrefix(f[2], "Z") {
			zombies = append(zombies, line)
		}
	}
	assert.Empty(t, zombies, "zombies left:\n%s", out)
	pid1 := run(t, c, `cat /proc/1/comm`)
	assert.Equal(t, "action-server", strings.TrimSpace(pid1), "the server is PID 1")
}

func TestPodmanStop_EndsRunningCommandsAndExitsWithZero(t *testing.T) {
	s, c := startSandbox(t, engine.Options{})
	// A command that ignores SIGTERM and its own background job, running
	// when the engine stops the container.
	_, err := c.StartCommand(ctxT(t, time.Minute), "default", `trap '' TERM; sleep 1000 & sleep 1000`)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		obs, err := c.Run(ctxT(t, 30*time.Second), "pgrep -c -x sleep", client.RunOptions{Static: true, Timeout: 10 * time.Second})
		return err == nil && strings.TrimSpace(obs.Content) == "2"
	}, 20*time.Second, 200*time.Millisecond)

	// -t 5: a server that has not exited after 5 s is killed, and the
	// container's status is then 137, not 0.
	out, err := podmanCmd(ctxT(t, time.Minute), "stop", "-t", "5", s.Name).CombinedOutput()
	require.NoError(t, err, "%s", out)
	state, err := podmanCmd(ctxT(t, time.Minute), "inspect", "--format", "{{.State.ExitCode}} {{.State.Status}}", s.Name).Output()
	require.NoError(t, err)
	assert.Equal(t, "0 exited", strings.TrimSpace(string(state)), "logs:\n%s", containerLogs(t, s.Name))
}

func TestLauncherForm_StartsWhenTheEngineKeepsTheEntrypoint(t *testing.T) {
	// What podman before 5.6 does with the OpenHands host's request: the
	// image's entrypoint (the server) stays, and the host's command
	// (launcher path first) becomes its arguments.
	launcher := []string{"/openhands/micromamba/bin/micromamba", "run", "-n", "openhands", "poetry", "run", "python", "-u", "-m",
		"openhands.runtime.action_execution_server", strconv.Itoa(engine.ServerPort), "--working-dir", "/workspace",
		"--plugins", "agent_skills", "jupyter", "--username", "openhands", "--user-id", "1000", "--no-enable-browser"}
	_, c := startSandbox(t, engine.Options{Cmd: launcher})
	out := run(t, c, "echo launched; whoami; pwd")
	assert.Equal(t, "launched\nopenhands\n/workspace", out)
}

// wheelScript writes a minimal pure-Python wheel of module NAME (X = 42)
// to /tmp, so installing needs no index.
func wheelScript(name string) string {
	return fmt.Sprintf(`python3 - <<'EOF'
import base64, hashlib, zipfile
name = %q
files = {
    name + ".py": "X = 42\n",
    name + "-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n",
    name + "-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = ""
for path, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record += f"{path},sha256={digest},{len(text)}\n"
record += name + "-1.0.dist-info/RECORD,,\n"
files[name + "-1.0.dist-info/RECORD"] = record
with zipfile.ZipFile(f"/tmp/{name}-1.0-py3-none-any.whl", "w") as z:
    for path, text in files.items():
        z.writestr(path, text)
EOF`, name)
}

func TestPip_InstallsInTheShellAndTheKernel(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"a native user passes nothing", nil},
		{"the OpenHands host passes PIP_BREAK_SYSTEM_PACKAGES", []string{"PIP_BREAK_SYSTEM_PACKAGES=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := startSandbox(t, engine.Options{Env: tc.env})
			run(t, c, wheelScript("asshell"))
			run(t, c, wheelScript("askernel"))

			out := run(t, c, `pip install --no-index /tmp/asshell-1.0-py3-none-any.whl && python -c 'import asshell; print(asshell.X)'`)
			assert.Contains(t, out, "Successfully installed asshell-1.0")
			assert.True(t, strings.HasSuffix(out, "\n42"), out)

			timeout := 120.0
			obs, err := c.Execute(ctxT(t, 3*time.Minute), &event.IPythonRunCell{Header: event.Header{Timeout: &timeout},
				Code: "%pip install --no-index /tmp/askernel-1.0-py3-none-any.whl\nimport askernel\nprint('X =', askernel.X)"})
			require.NoError(t, err)
			cell, ok := obs.(*event.IPythonOutput)
			require.True(t, ok, "got %T: %s", obs, obs.Text())
			assert.Contains(t, cell.Content, "Successfully installed askernel-1.0")
			assert.Contains(t, cell.Content, "X = 42")
		})
	}
}

func TestStandInBases_TheAgentsToolchainRuns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pkgs    []string
		command string
		want    string
	}{
		{"python", []string{"python3", "python3-pip", "python3-venv"}, "python3 --version", "Python 3."},
		{"node", []string{"nodejs"}, "node --version", "v"},
		{"go", []string{"golang-go"}, "go version", "go version go1."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := baseImage(tc.name, tc.pkgs...)
			require.NoError(t, err)
			// Only what the server itself needs: the toolchain is the base's.
			img, err := buildImage(base, "--no-browser", "--no-agent-tools")
			require.NoError(t, err)
			_, c := startSandbox(t, engine.Options{Image: img})
			out := run(t, c, tc.command)
			assert.True(t, strings.HasPrefix(out, tc.want), "%s: %q", tc.command, out)
			assert.Equal(t, "openhands", strings.TrimSpace(run(t, c, "whoami")))
		})
	}
}

func TestActionctl_UpAndDownThroughTheEnginesAPI(t *testing.T) {
	name := uniqueName(t)
	up := exec.Command(env.bin+"/actionctl", "up", "--json", "--engine", env.socket, "--name", name, env.runtime)
	out, err := up.Output()
	require.NoError(t, err, "%s", exitStderr(err))
	t.Cleanup(func() { _ = podmanCmd(ctxT(t, time.Minute), "rm", "-f", name).Run() })
	var s engine.Sandbox
	require.NoError(t, json.Unmarshal(out, &s), "%s", out)
	assert.Equal(t, name, s.Name)
	assert.True(t, strings.HasPrefix(s.URL, "http://127.0.0.1:"), s.URL)
	require.NotEmpty(t, s.APIKey)

	// The key it printed is the one the server demands.
	_, err = client.New(s.URL).Run(ctxT(t, time.Minute), "true", client.RunOptions{})
	var apiErr *client.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 403, apiErr.StatusCode)
	obs, err := client.New(s.URL, client.WithAPIKey(s.APIKey)).Run(ctxT(t, time.Minute), "echo up", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "up", obs.Content)

	// Published on loopback only.
	ports, err := podmanCmd(ctxT(t, time.Minute), "port", name).Output()
	require.NoError(t, err)
	assert.Contains(t, string(ports), "127.0.0.1:")

	down := exec.Command(env.bin+"/actionctl", "down", "--engine", env.socket, name)
	out, err = down.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "removed: "+name+"\n", string(out))
	exists := podmanCmd(ctxT(t, time.Minute), "container", "exists", name).Run()
	assert.Error(t, exists, "the container is gone")
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
