package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/actionserver/actionserver/shell"
	"github.com/actionserver/actionserver/shell/ohrun"
)

// Errors of a claim.
var (
	ErrBadClaimDir = sentinel(KindInvalid, errors.New("working_dir must be an absolute path to an existing directory"))
	ErrBadEnvName  = sentinel(KindInvalid, errors.New("env names are letters, digits and '_', not starting with a digit"))
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// claimed is what the sandbox's owner set when it claimed it: added to
// every shell started afterwards.
type claimed struct {
	env map[string]string
	dir string
}

// Claim hands the sandbox to an owner (late binding): env is set in the
// default shell, in every session started later and in piped commands; dir,
// when set, is where the default shell moves and later sessions start.
// Idle time starts again. A claim that sets neither leaves the shells
// alone, so it can rotate the server's key while a command runs; one that
// does fails with ErrBusy while the default shell runs a command.
func (e *Executor) Claim(ctx context.Context, env map[string]string, dir string) error {
	// Idle time counts from the hand-over, whatever the claim ran.
	defer e.lastRun.Store(time.Now().UnixNano())
	for k := range env {
		if !envName.MatchString(k) {
			return ErrBadEnvName.withText("env name %q: %s", k, ErrBadEnvName.Err)
		}
	}
	if err := checkStartOptions("", env); err != nil {
		return err // a value no process can be started with
	}
	if dir != "" {
		if fi, err := os.Stat(dir); !filepath.IsAbs(dir) || err != nil || !fi.IsDir() {
			return ErrBadClaimDir
		}
	}
	if len(env) == 0 && dir == "" {
		return nil
	}
	sess, err := e.shell(ctx, DefaultSession)
	if err != nil {
		return err
	}
	if _, busy := sess.Running(); busy {
		return ErrBusy.withText("a command runs in the default session: claim again without env and working_dir, or when it ended")
	}
	res, err := e.runner(sess).Run(ctx, ohrun.Request{Command: claimScript(env, dir), Hidden: true, Blocking: true, Timeout: 30 * time.Second})
	if errors.Is(err, shell.ErrBusy) {
		return ErrBusy.with(err)
	}
	if err != nil {
		return fmt.Errorf("apply the claim in the default shell: %w", err)
	}
	if !res.Finished || res.Metadata.ExitCode != 0 {
		return fmt.Errorf("apply the claim in the default shell: exit status %d", res.Metadata.ExitCode)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	next := claimed{env: maps.Clone(e.claim.env), dir: e.claim.dir}
	if next.env == nil {
		next.env = map[string]string{}
	}
	maps.Copy(next.env, env)
	if dir != "" {
		next.dir = dir
	}
	e.claim = next
	return nil
}

// claimScript exports env and changes to dir, in a stable order, as one
// command (the shell runs one at a time).
func claimScript(env map[string]string, dir string) string {
	var parts []string
	if len(env) > 0 {
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		assign := make([]string, len(keys))
		for i, k := range keys {
			assign[i] = k + "=" + quote(env[k])
		}
		parts = append(parts, "export "+strings.Join(assign, " "))
	}
	if dir != "" {
		parts = append(parts, "cd -- "+quote(dir))
	}
	return strings.Join(parts, " && ")
}

// quote makes s one word for bash, whatever its bytes.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// claimedEnv returns the shells' environment with what the claim added.
func (e *Executor) claimedEnv() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.claim.env) == 0 {
		return e.opts.Env
	}
	return mergeEnv(e.opts.Env, e.claim.env)
}

// workDir is where new sessions start: the claim's directory, or the
// workspace.
func (e *Executor) workDir() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.claim.dir != "" {
		return e.claim.dir
	}
	return e.opts.WorkDir
}

// pipeEnv adds the claim's environment under a piped command's own.
func (e *Executor) pipeEnv(env map[string]string) map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.claim.env) == 0 {
		return env
	}
	out := maps.Clone(e.claim.env)
	maps.Copy(out, env)
	return out
}
