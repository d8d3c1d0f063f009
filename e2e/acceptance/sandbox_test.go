package acceptance

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Where things are inside a sandbox. Each server runs in its own mount and
// PID namespace: a private /tmp (the workspace lives in it), a fresh home
// mounted over /root and, for the sandbox user, another over the user's
// home, and its own /proc. That is what a container gives upstream's
// tests: commands that write /tmp/test_dir or ~/.bashrc, run `sudo touch
// /root/test.txt` or `pkill -f http.server`, cannot reach another test,
// another developer's processes, or the machine's real home directories.
const (
	sandboxWorkspace = "/tmp/workspace"
	sandboxBinDir    = "/tmp/.sandbox-bin" // python, as the runtime image has it
	sandboxServerBin = "/tmp/.action-server/action-server"
	sandboxPath      = sandboxBinDir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// sandboxTimeout is the host's sandbox.timeout: what it sends when an
// action has no timeout of its own.
const sandboxTimeout = 120.0

// variant is upstream's run_as_openhands parameter.
type variant struct {
	name   string
	asUser bool
}

var (
	asRoot = variant{name: "root"}
	asUser = variant{name: "sandbox_user", asUser: true}
)

func (v variant) username() string {
	if v.asUser {
		return sandboxUserName
	}
	return "root"
}

func (v variant) home() string {
	if v.asUser {
		return "/home/" + sandboxUserName
	}
	return "/root"
}

// eachUser runs fn as root and as the sandbox user, in parallel; upstream
// runs its suite once per value of RUN_AS_OPENHANDS.
func eachUser(t *testing.T, fn func(t *testing.T, v variant)) {
	t.Parallel()
	for _, v := range []variant{asRoot, asUser} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			fn(t, v)
		})
	}
}

type envVar struct{ key, value string }

// runtimeOpts are the parts of upstream's _load_runtime the tests use.
type runtimeOpts struct {
	// startupEnv is sandbox.runtime_startup_env_vars: set on the container
	// and added with add_env_vars after connecting.
	startupEnv []envVar
	// sandboxEnv is the host's SANDBOX_ENV_<X> variables (as X): set on
	// the container and added as the runtime's initial env vars.
	sandboxEnv []envVar
	// plugins are passed with --plugins. Upstream's tests load
	// agent_skills and jupyter; the bash ports run without (see doc.go).
	plugins []string
	// enableBrowser is _load_runtime's enable_browser: without it the host
	// passes --no-enable-browser.
	enableBrowser bool
}

// runtime is one sandbox driven the way the host's DockerRuntime drives
// its container.
type runtime struct {
	t    *testing.T
	v    variant
	opts runtimeOpts

	base    string // on this machine: holds the sandbox's /tmp and home
	hostTmp string
	url     string
	srv     *exec.Cmd
	exited  chan struct{}
	logs    *syncBuffer
}

// loadRuntime starts a sandbox and connects to it as the host does:
// start the server, wait until /alive answers, then setup_initial_env.
func loadRuntime(t *testing.T, v variant, opts runtimeOpts) *runtime {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("the sandboxes need root: namespaces, mounts and a created user")
	}
	if v.asUser {
		ensureSandboxUser(t)
	}
	r := &runtime{t: t, v: v, opts: opts, base: t.TempDir()}
	r.prepare()
	r.start()
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			t.Logf("server log:\n%s", r.logs.String())
		}
	})
	r.setupInitialEnv()
	return r
}

// prepare lays out the sandbox's file system on this machine.
func (r *runtime) prepare() {
	t := r.t
	r.hostTmp = filepath.Join(r.base, "tmp")
	home := filepath.Join(r.base, "home")
	must(t, os.MkdirAll(filepath.Join(r.hostTmp, "workspace"), 0o777))
	must(t, os.Chmod(r.hostTmp, 0o1777|os.ModeSticky))
	must(t, os.Chmod(filepath.Join(r.hostTmp, "workspace"), 0o777)) // as the suite's temp_dir
	must(t, os.MkdirAll(filepath.Join(r.hostTmp, ".sandbox-bin"), 0o755))
	must(t, os.Symlink("/usr/bin/python3", filepath.Join(r.hostTmp, ".sandbox-bin", "python")))
	must(t, os.MkdirAll(filepath.Join(r.hostTmp, ".action-server"), 0o755))
	bin := filepath.Join(r.hostTmp, ".action-server", "action-server")
	if err := os.Link(serverBin, bin); err != nil {
		must(t, copyFile(serverBin, bin, 0o755))
	}
	must(t, os.MkdirAll(home, 0o700))
	// root's home, of its own in every sandbox: the sandbox user can
	// reach it with sudo, as upstream's tests do.
	must(t, os.MkdirAll(filepath.Join(r.base, "roothome"), 0o700))
	if r.v.asUser {
		// The user's home as useradd -m makes it in the runtime image.
		for _, f := range []string{".bashrc", ".profile", ".bash_logout"} {
			if _, err := os.Stat(filepath.Join("/etc/skel", f)); err == nil {
				must(t, copyFile(filepath.Join("/etc/skel", f), filepath.Join(home, f), 0o644))
			}
		}
		u, err := user.Lookup(sandboxUserName)
		must(t, err)
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		must(t, filepath.Walk(home, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, uid, gid)
		}))
	}
}

// start runs the server in its namespaces with upstream's command line
// (plus --host, so it listens on loopback only) and the environment
// DockerRuntime gives the container, then waits until it is alive.
func (r *runtime) start() {
	t := r.t
	port := freePort(t)
	args := []string{strconv.Itoa(port), "--host", "127.0.0.1", "--working-dir", sandboxWorkspace}
	if len(r.opts.plugins) > 0 {
		args = append(append(args, "--plugins"), r.opts.plugins...)
	}
	uid := 0
	if r.v.asUser {
		uid = sandboxUID
	}
	args = append(args, "--username", r.v.username(), "--user-id", strconv.Itoa(uid))
	if !r.opts.enableBrowser {
		args = append(args, "--no-enable-browser")
	}

	env := []string{"PATH=" + sandboxPath, "HOME=/root", "LANG=C.UTF-8"}
	for _, e := range r.opts.sandboxEnv {
		env = append(env, e.key+"="+e.value)
	}
	env = append(env,
		"port="+strconv.Itoa(port),
		"PYTHONUNBUFFERED=1",
		"OPENHANDS_SESSION_ID=rt_"+strconv.Itoa(100000+rand.IntN(900000)),
		"PIP_BREAK_SYSTEM_PACKAGES=1",
	)
	for _, e := range r.opts.startupEnv {
		env = append(env, e.key+"="+e.value)
	}

	const script = `set -eu
home_src=$1 home_dst=$2 tmp_src=$3 root_src=$4
shift 4
mount --make-rprivate /
if [ "$home_dst" != /root ]; then mount --bind "$root_src" /root; fi
mount --bind "$home_src" "$home_dst"
mount --bind "$tmp_src" /tmp
mount -t proc proc /proc
exec ` + sandboxServerBin + ` "$@"`
	cmd := exec.Command("/bin/sh", append([]string{"-c", script, "sh",
		filepath.Join(r.base, "home"), r.v.home(), r.hostTmp, filepath.Join(r.base, "roothome")}, args...)...)
	cmd.Env = env
	if r.logs == nil {
		r.logs = &syncBuffer{}
	}
	cmd.Stdout, cmd.Stderr = r.logs, r.logs
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
		Setpgid:    true,
	}
	must(t, cmd.Start())
	r.srv = cmd
	r.exited = make(chan struct{})
	go func(exited chan struct{}) { cmd.Wait(); close(exited) }(r.exited)
	r.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitAlive(r.url, r.exited, time.Minute); err != nil {
		t.Fatalf("start the server: %v\n%s", err, r.logs.String())
	}
}

// stop ends the server as `docker stop` does: SIGTERM, then SIGKILL after
// ten seconds. Its namespace, and all that ran in it, ends with it.
func (r *runtime) stop() {
	if r.srv == nil {
		return
	}
	_ = r.srv.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-r.srv.Process.Pid, syscall.SIGKILL)
		<-r.exited
	}
	r.srv = nil
}

// restart is DockerRuntime's pause() then resume(): the container stops
// and starts again with the same environment and files; the host only
// waits for /alive (no setup_initial_env).
func (r *runtime) restart() {
	r.stop()
	r.start()
}

// workspace is config.workspace_mount_path_in_sandbox.
func (r *runtime) workspace() string { return sandboxWorkspace }

// hostPath returns where a path under the sandbox's /tmp is on this machine.
func (r *runtime) hostPath(sandboxPath string) string {
	rel, err := filepath.Rel("/tmp", sandboxPath)
	if err != nil {
		r.t.Fatalf("%s is not under /tmp", sandboxPath)
	}
	return filepath.Join(r.hostTmp, rel)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
