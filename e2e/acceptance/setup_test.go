package acceptance

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ports of tests/runtime/test_setup.py, with the host's
// initialize_repository_for_runtime, clone_or_init_repo,
// maybe_run_setup_script and maybe_setup_git_hooks.

// test_initialize_repository_for_runtime. Upstream clones
// https://github.com/OpenHands/OpenHands.git; this machine has no route
// there, so the same commands clone a local repository of that name.
func TestInitializeRepositoryForRuntime(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		origin := rt.makeOriginRepo("OpenHands")

		repositoryDir := rt.initializeRepositoryForRuntime(origin, "OpenHands/OpenHands")

		assert.Equal(t, "OpenHands", repositoryDir)
	})
}

// test_maybe_run_setup_script
func TestMaybeRunSetupScript(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		writeObs := rt.write(".openhands/setup.sh", "#!/bin/bash\necho 'Hello World' >> README.md\n")
		assert.Equal(t, "write", writeObs.Kind, "upstream expects a FileWriteObservation; %v", writeObs)

		rt.maybeRunSetupScript()

		readObs := rt.read("README.md")
		assert.Equal(t, "read", readObs.Kind, "upstream expects a FileReadObservation; %v", readObs)
		assert.Equal(t, "Hello World\n", readObs.Content, readObs)
	})
}

// test_maybe_run_setup_script_with_long_timeout: the script outlasts the
// one-second no-change timeout, but the host runs it blocking.
func TestMaybeRunSetupScript_WithLongTimeout(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{startupEnv: []envVar{{"NO_CHANGE_TIMEOUT_SECONDS", "1"}}})

		writeObs := rt.write(".openhands/setup.sh", "#!/bin/bash\nsleep 3 && echo 'Hello World' >> README.md\n")
		assert.Equal(t, "write", writeObs.Kind, "upstream expects a FileWriteObservation; %v", writeObs)

		rt.maybeRunSetupScript()

		readObs := rt.read("README.md")
		assert.Equal(t, "read", readObs.Kind, "upstream expects a FileReadObservation; %v", readObs)
		assert.Equal(t, "Hello World\n", readObs.Content, readObs)
	})
}

// initializeRepositoryForRuntime is the host's function of that name, with
// remoteURL standing for the authenticated URL of selectedRepository.
func (r *runtime) initializeRepositoryForRuntime(remoteURL, selectedRepository string) string {
	r.t.Helper()
	dir := r.cloneOrInitRepo(remoteURL, selectedRepository)
	r.maybeRunSetupScript()
	r.maybeSetupGitHooks()
	return dir
}

// cloneOrInitRepo is Runtime.clone_or_init_repo for a selected repository
// and no branch. The host ignores the results of the clone and checkout.
func (r *runtime) cloneOrInitRepo(remoteURL, selectedRepository string) string {
	r.t.Helper()
	dirName := selectedRepository[strings.LastIndex(selectedRepository, "/")+1:]
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	branch := []byte("openhands-workspace-")
	for range 8 {
		branch = append(branch, alphabet[rand.IntN(len(alphabet))])
	}
	repoPath := shlexQuote(r.workspace() + "/" + dirName)
	quotedURL := shlexQuote(remoteURL)

	r.run(run("git clone " + quotedURL + " " + repoPath))
	r.run(run("cd " + repoPath + " && git checkout -b " + shlexQuote(string(branch))))
	obs := r.run(run("cd " + repoPath + " && git remote set-url origin " + quotedURL))
	if obs.Kind != "run" || obs.metadata.ExitCode != 0 {
		r.t.Logf("Failed to set git remote origin (the host only logs this): %v", obs)
	}
	return dirName
}

// maybeRunSetupScript is Runtime.maybe_run_setup_script.
func (r *runtime) maybeRunSetupScript() {
	r.t.Helper()
	const script = ".openhands/setup.sh"
	if r.read(script).Kind == "error" {
		return
	}
	a := &cmdRun{command: "chmod +x " + script + " && source " + script, blocking: true, hidden: true}
	r.run(a.setHardTimeout(600))
}

// maybeSetupGitHooks is the start of Runtime.maybe_setup_git_hooks: with
// no .openhands/pre-commit.sh (as in these tests) it stops after the read.
func (r *runtime) maybeSetupGitHooks() {
	r.t.Helper()
	obs := r.read(".openhands/pre-commit.sh")
	if obs.Kind != "error" {
		r.t.Fatalf("reading a missing .openhands/pre-commit.sh must give an ErrorObservation, or the host goes on to install hooks; %v", obs)
	}
}

// makeOriginRepo makes a bare repository with one commit at
// /tmp/origin/<name>.git in the sandbox, owned by the sandbox's user.
func (r *runtime) makeOriginRepo(name string) string {
	r.t.Helper()
	t := r.t
	work := t.TempDir()
	src := filepath.Join(work, "src")
	bare := r.hostPath("/tmp/origin/" + name + ".git")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=origin", "GIT_AUTHOR_EMAIL=origin@example.com",
			"GIT_COMMITTER_NAME=origin", "GIT_COMMITTER_EMAIL=origin@example.com"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	require.NoError(t, os.MkdirAll(src, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(bare), 0o755))
	git(src, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(src, "README.md"), []byte("# "+name+"\n"), 0o644))
	git(src, "add", "README.md")
	git(src, "commit", "-q", "-m", "initial")
	git(work, "clone", "-q", "--bare", src, bare)
	if r.v.asUser {
		u, err := user.Lookup(sandboxUserName)
		require.NoError(t, err)
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		require.NoError(t, filepath.Walk(filepath.Dir(bare), func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, uid, gid)
		}))
	}
	return "/tmp/origin/" + name + ".git"
}

var shlexUnsafe = regexp.MustCompile(`[^\w@%+=:,./-]`)

// shlexQuote is Python's shlex.quote.
func shlexQuote(s string) string {
	if s == "" {
		return "''"
	}
	if !shlexUnsafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
