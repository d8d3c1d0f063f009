package shell

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Cgroups puts each session in a cgroup v2 of its own, below the server's
// cgroup, so that closing the session ends every process it started: a
// process that called setsid leaves the terminal session and the process
// group the session otherwise tracks, never its cgroup. It needs a
// writable cgroup v2 hierarchy (root on a host, a privileged or delegated
// container) and Linux 5.14 (cgroup.kill); NewCgroups says when there is
// none, and sessions then go without.
type Cgroups struct {
	dir string
	n   atomic.Int64
}

// cgroupPrefix starts the name of a server's cgroup; its pid and a random
// word follow (servers in other pid namespaces may have the same pid).
const cgroupPrefix = "action-server-"

// NewCgroups makes the cgroup under which this server's sessions get
// theirs, and removes those that servers no longer running left behind.
func NewCgroups() (*Cgroups, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return nil, err
	}
	own, err := ownCgroup()
	if err != nil {
		return nil, err
	}
	parent := filepath.Join(mount, own)
	sweepStaleCgroups(parent)
	word := make([]byte, 4)
	if _, err := rand.Read(word); err != nil {
		return nil, err
	}
	dir := filepath.Join(parent, cgroupPrefix+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(word))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make a cgroup for the sessions: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("cgroup.kill: the kernel is older than 5.14: %w", err)
	}
	return &Cgroups{dir: dir}, nil
}

// Dir returns the cgroup's directory.
func (c *Cgroups) Dir() string { return c.dir }

// Close removes the server's cgroup; the sessions' must be gone.
func (c *Cgroups) Close() error {
	if c == nil {
		return nil
	}
	if err := os.Remove(c.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the sessions' cgroup: %w", err)
	}
	return nil
}

// cgroup2Mount returns where the cgroup v2 hierarchy is mounted.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "... mountpoint options [optional fields] - fstype source options"
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fields := strings.Fields(pre)
		if len(fields) >= 5 {
			return fields[4], nil
		}
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted")
}

// ownCgroup returns the server's cgroup v2 path, as /proc/self/cgroup
// says ("0::/path").
func ownCgroup() (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("the server is in no cgroup v2")
}

// sweepStaleCgroups removes the cgroups that servers killed before they
// could remove theirs left below parent: those with no process left. (A
// server's pid cannot tell, when it ran in another pid namespace.) A
// running server whose cgroups are all empty may lose its own; it makes it
// again for its next session.
func sweepStaleCgroups(parent string) {
	matches, _ := filepath.Glob(filepath.Join(parent, cgroupPrefix+"*"))
	for _, m := range matches {
		if populated(m) {
			continue
		}
		subs, _ := filepath.Glob(filepath.Join(m, "s-*"))
		for _, s := range subs {
			os.Remove(s)
		}
		os.Remove(m)
	}
}

// populated reports whether a cgroup or one below it has a process, or
// whether that cannot be read.
func populated(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return true
	}
	return !bytes.Contains(data, []byte("populated 0"))
}

// sessionCgroup is one session's cgroup.
type sessionCgroup struct {
	path string
	fd   int // the directory, open for CLONE_INTO_CGROUP
}

// newSession makes a cgroup for one session; nil when c is nil.
func (c *Cgroups) newSession() (*sessionCgroup, error) {
	if c == nil {
		return nil, nil
	}
	path := filepath.Join(c.dir, "s-"+strconv.FormatInt(c.n.Add(1), 10))
	err := os.Mkdir(path, 0o755)
	if errors.Is(err, os.ErrNotExist) {
		// Swept by another server while it held no process.
		if err = os.Mkdir(c.dir, 0o755); err == nil || errors.Is(err, os.ErrExist) {
			err = os.Mkdir(path, 0o755)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("make the session's cgroup: %w", err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("open the session's cgroup: %w", err)
	}
	return &sessionCgroup{path: path, fd: fd}, nil
}

// startIn starts the command mk makes in the cgroup g, or, if that
// fails, without one: a seccomp filter may refuse clone3, or the cgroup
// may have been removed meanwhile, and the cgroup is a safety net, not a
// condition. mk is called again for the second try (a Cmd starts once).
func startIn(g *sessionCgroup, log *slog.Logger, mk func() *exec.Cmd) (*exec.Cmd, error) {
	c := mk()
	if g == nil {
		return c, c.Start()
	}
	c.SysProcAttr.UseCgroupFD, c.SysProcAttr.CgroupFD = true, g.fd
	first := c.Start()
	if first == nil {
		return c, nil
	}
	c = mk()
	if err := c.Start(); err != nil {
		return c, err
	}
	log.Warn("started a process outside its session's cgroup", "error", first)
	return c, nil
}

// procs lists the processes in the cgroup.
func (g *sessionCgroup) procs() []int {
	data, err := os.ReadFile(filepath.Join(g.path, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range bytes.Fields(data) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// close ends every process in the cgroup, SIGTERM first and the rest at
// once by cgroup.kill when ctx is done, then removes it.
func (g *sessionCgroup) close(ctx context.Context) {
	if g == nil {
		return
	}
	defer unix.Close(g.fd)
	for _, pid := range g.procs() {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	grace := ctx.Done()
	// A killed process leaves the cgroup only once it is reaped (or, in
	// uninterruptible sleep, later still); that wait is bounded, so a
	// close stays within its caller's budget.
	var limit <-chan time.Time
	for len(g.procs()) > 0 {
		select {
		case <-grace:
			grace = nil
			limit = time.After(time.Second)
			_ = os.WriteFile(filepath.Join(g.path, "cgroup.kill"), []byte("1"), 0)
		case <-limit:
			return // left for the sweep of a later server
		case <-tick.C:
		}
	}
	os.Remove(g.path)
}
