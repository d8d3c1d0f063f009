package jupyter

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/plugins"
)

func startPlugin(t *testing.T, env plugins.Env) *Plugin {
	t.Helper()
	if _, err := serverBinary(nil); err != nil {
		t.Fatalf("%v: run scripts/deps.sh", err)
	}
	if env.WorkDir == "" {
		env.WorkDir = t.TempDir()
	}
	if env.Environ == nil {
		env.Environ = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
	}
	if env.Logger == nil {
		env.Logger = slog.New(slog.DiscardHandler)
	}
	p := New().(*Plugin)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, p.Start(ctx, env))
	t.Cleanup(func() { p.Stop(context.Background()) })
	return p
}

// serverPID is the pid of the running Jupyter Server, 0 when there is none.
func serverPID(p *Plugin) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv == nil {
		return 0
	}
	return p.srv.Pid()
}

func run(t *testing.T, p *Plugin, code string, mod ...func(*Cell)) Result {
	t.Helper()
	c := Cell{Code: code}
	for _, m := range mod {
		m(&c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := p.RunCell(ctx, c)
	require.NoError(t, err)
	return r
}

// tinyPNG builds a valid 1x1 PNG with the standard library only.
const tinyPNG = `import struct, zlib
def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
png = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)) + _chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + _chunk(b"IEND", b"")
from IPython.display import Image, display
display(Image(data=png))`

func TestRunCell_Outputs(t *testing.T) {
	p := startPlugin(t, plugins.Env{})
	assert.Equal(t, plugins.StateReady, p.Status().State)
	assert.NotZero(t, p.Status().Port)

	cases := []struct{ name, code, want string }{
		{"print", `print("hello")`, "hello"},
		{"expression", "1 + 1", "2"},
		{"print then value", "print('a')\n'b'", "a\n'b'"},
		{"no output", "x = 1", "[Code executed successfully with no output]"},
		{"state kept", "x + 41", "42"},
		{"stderr", "import sys; _ = sys.stderr.write('oops\\n')", "oops"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, p, tc.code)
			assert.Equal(t, tc.want, r.Content)
			assert.Nil(t, r.ImageURLs)
		})
	}

	r := run(t, p, "1/0")
	assert.Contains(t, r.Content, "ZeroDivisionError")
	assert.NotContains(t, r.Content, "\x1b[", "no colour codes")

	r = run(t, p, tinyPNG)
	require.Len(t, r.ImageURLs, 1)
	assert.True(t, strings.HasPrefix(r.ImageURLs[0], "data:image/png;base64,iVBORw0KGgo"), r.ImageURLs[0])
	assert.Equal(t, "<IPython.core.display.Image object>", r.Content)

	dir := t.TempDir()
	r = run(t, p, "import os; print(os.getcwd())", func(c *Cell) { c.Cwd, c.IncludeExtra = dir, true })
	assert.Equal(t, dir+"\n[Jupyter current working directory: "+dir+"]\n[Jupyter Python interpreter: "+p.Interpreter()+"]", r.Content)
	assert.True(t, strings.HasPrefix(p.Interpreter(), "/"), p.Interpreter())

	run(t, p, `import os; os.environ["QUUX"] = "abc\"def"`)
	assert.Equal(t, `abc"def`, run(t, p, `import os; print(os.environ["QUUX"])`).Content)
}

func TestRunCell_TimeoutInterrupts(t *testing.T) {
	p := startPlugin(t, plugins.Env{})
	timeout := 1.0
	r := run(t, p, "import time\nfor i in range(600): time.sleep(0.1)", func(c *Cell) { c.Timeout = &timeout })
	assert.Equal(t, "[Execution timed out (1.0 seconds).]", r.Content)
	// The kernel was interrupted, not killed: state survives.
	run(t, p, "kept = 7")
	assert.Equal(t, "7", run(t, p, "kept").Content)
}

func TestRunCell_KernelDeathIsReportedAndRecovered(t *testing.T) {
	p := startPlugin(t, plugins.Env{})
	run(t, p, "before = 1")

	// Killed while a cell runs.
	r := run(t, p, "import os; print('going', flush=True); os.kill(os.getpid(), 9)")
	assert.Contains(t, r.Content, "The IPython kernel died while running this cell")
	r = run(t, p, "print('back')")
	assert.Equal(t, restartedNote+"\nback", r.Content)
	assert.Contains(t, run(t, p, "before").Content, "NameError", "a restarted kernel has no old state")

	// Killed from outside between cells.
	pid, err := strconv.Atoi(run(t, p, "import os; print(os.getpid())").Content)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !p.kernel.alive() }, 10*time.Second, 20*time.Millisecond)
	r = run(t, p, "print('again')")
	assert.Equal(t, restartedNote+"\nagain", r.Content)
}

func TestPlugin_ServerRestartedAfterItDies(t *testing.T) {
	p := startPlugin(t, plugins.Env{})
	pid := serverPID(p)
	require.NotZero(t, pid)
	require.NoError(t, syscall.Kill(-pid, syscall.SIGKILL))
	require.Eventually(t, func() bool {
		q := serverPID(p)
		return p.Status().State == plugins.StateReady && q != 0 && q != pid
	}, 60*time.Second, 50*time.Millisecond, "the supervisor brings the server back")
	r := run(t, p, "print('alive')")
	assert.Equal(t, restartedNote+"\nalive", r.Content)
}

func TestPlugin_StopLeavesNoProcess(t *testing.T) {
	p := startPlugin(t, plugins.Env{})
	kernelPID, err := strconv.Atoi(run(t, p, "import os; print(os.getpid())").Content)
	require.NoError(t, err)
	pid := serverPID(p)
	require.NotZero(t, pid)
	require.NoError(t, p.Stop(context.Background()))
	for _, q := range []int{pid, kernelPID} {
		err := syscall.Kill(q, 0)
		assert.ErrorIs(t, err, syscall.ESRCH, "process %d still exists", q)
	}
}

func TestPlugin_KernelRunsAsTheSandboxUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("switching users needs root")
	}
	const name, uid = "astest", 1990
	if _, err := user.Lookup(name); err != nil {
		require.NoError(t, exec.Command("useradd", "-m", "-u", strconv.Itoa(uid), name).Run())
		t.Cleanup(func() { exec.Command("userdel", "-r", name).Run() })
	}
	u, err := user.Lookup(name)
	require.NoError(t, err)
	gid, _ := strconv.Atoi(u.Gid)
	ws, err := os.MkdirTemp("", "jupyter-user-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(ws) })
	require.NoError(t, os.Chown(ws, uid, gid))
	p := startPlugin(t, plugins.Env{WorkDir: ws, Username: name, UID: uid, GID: gid,
		Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)},
		Environ:    []string{"PATH=/usr/bin:/bin", "HOME=" + u.HomeDir, "USER=" + name, "LANG=C.UTF-8"}})
	r := run(t, p, "import os, getpass; open('made.txt', 'w').write('x'); print(os.getuid(), getpass.getuser())",
		func(c *Cell) { c.Cwd = ws })
	assert.Equal(t, fmt.Sprintf("%d %s", uid, name), r.Content)
	fi, err := os.Stat(ws + "/made.txt")
	require.NoError(t, err)
	assert.EqualValues(t, uid, fi.Sys().(*syscall.Stat_t).Uid)
}

// TestPlugin_StartsOnAnotherPortWhenItsPortIsTaken stands a server in
// front of the real one that, the first time, lets another process take
// its port and then fails as Jupyter Server does in that case.
func TestPlugin_StartsOnAnotherPortWhenItsPortIsTaken(t *testing.T) {
	real, err := serverBinary(nil)
	require.NoError(t, err)
	dir := t.TempDir()
	script := `#!/bin/sh
dir=$1; real=$2; shift 2
if [ ! -e "$dir/taken" ]; then
	port=$(printf '%s\n' "$@" | sed -n 's/^--ServerApp.port=//p')
	python3 -c '
import os, socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
open(sys.argv[2] + ".tmp", "w").write(sys.argv[1] + " " + str(os.getpid()))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
time.sleep(60)' "$port" "$dir/taken" &
	while [ ! -e "$dir/taken" ]; do sleep 0.01; done
	echo "port $port is not available" >&2
	exit 1
fi
exec "$real" "$@"
`
	wrapper := filepath.Join(dir, "jupyter-server")
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o755))
	launcher := filepath.Join(dir, "launch")
	require.NoError(t, os.WriteFile(launcher, []byte("#!/bin/sh\nexec "+wrapper+" "+dir+" "+real+" \"$@\"\n"), 0o755))

	p := startPlugin(t, plugins.Env{Environ: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(),
		"LANG=C.UTF-8", ServerBinEnv + "=" + launcher}})

	b, err := os.ReadFile(filepath.Join(dir, "taken"))
	require.NoError(t, err, "the first server was started")
	var taken, holder int
	_, err = fmt.Sscan(string(b), &taken, &holder)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Kill(holder, syscall.SIGKILL) })
	assert.NotEqual(t, taken, p.Status().Port, "the plugin moved to another port")
	assert.Equal(t, "1", run(t, p, "print(1)").Content)
}
