package ohrun

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/shell"
)

func run(t *testing.T, s *Session, req Request) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.Run(ctx, req)
	require.NoError(t, err, "command %q", req.Command)
	return res
}

func cmd(c string) Request { return Request{Command: c} }

// done is a request expected to complete: it waits without the no-change
// timeout (bounded by a hard one), so a loaded machine cannot turn a slow
// completion into a spurious timeout.
func done(c string, input bool) Request {
	return Request{Command: c, IsInput: input, Blocking: true, Timeout: 30 * time.Second}
}

func TestRun_OutputAndExitCodes(t *testing.T) {
	s := newSession(t, nil)
	cases := []struct {
		command string
		content string
		exit    int
	}{
		{"echo hello", "hello", 0},
		{"echo 'hello   world    with\nspecial  chars'", "hello   world    with\nspecial  chars", 0},
		{"false", "", 1},
		{"nonexistent_command", "bash: nonexistent_command: command not found", 127},
		{`echo "first" && echo "second"`, "first\nsecond", 0},
		{"echo -e 'a\\n\\n\\nz'", "a\n\n\nz", 0},
		{`echo "hi!there"`, "hi!there", 0}, // no history expansion
		{"echo '  padded  '", "padded", 0}, // content is trimmed, as upstream
		{"(exit 3)", "", 3},
		{"echo 'unclosed", "bash: unexpected EOF while looking for matching `''", 2},
	}
	for _, tc := range cases {
		res := run(t, s, cmd(tc.command))
		assert.Equal(t, tc.content, res.Content, tc.command)
		assert.True(t, res.Finished, tc.command)
		assert.Equal(t, tc.exit, res.Metadata.ExitCode, tc.command)
		assert.Equal(t, suffixCompleted(tc.exit), res.Suffix, tc.command)
		assert.Equal(t, "", res.Prefix, tc.command)
		assert.Equal(t, tc.command, res.Command)
	}
}

func TestRun_Metadata(t *testing.T) {
	binDir := t.TempDir()
	python := filepath.Join(binDir, "python")
	require.NoError(t, os.WriteFile(python, []byte("#!/bin/sh\n"), 0o755))
	s := newSession(t, nil)

	res := run(t, s, cmd("true"))
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	me := currentUserName(t)
	assert.Equal(t, me, res.Metadata.Username)
	assert.Equal(t, host, res.Metadata.Hostname)
	assert.Equal(t, s.opts.Dir, res.Metadata.WorkingDir)
	assert.Equal(t, -1, res.Metadata.PID, "no background job yet")

	res = run(t, s, cmd("export PATH="+binDir+":/usr/bin:/bin"))
	assert.Equal(t, python, res.Metadata.PyInterpreterPath)
	res = run(t, s, cmd("export PATH=/nonexistent"))
	assert.Equal(t, "", res.Metadata.PyInterpreterPath, "empty when python is not on PATH")
	run(t, s, cmd("export PATH="+os.Getenv("PATH")))

	res = run(t, s, cmd("sleep 0.2 &"))
	require.Greater(t, res.Metadata.PID, 0)
	assert.Equal(t, "[1] "+strconv.Itoa(res.Metadata.PID), res.Content, "job control prints the job")
}

func currentUserName(t *testing.T) string {
	out, err := exec.Command("id", "-un").Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

func TestRun_StatePersistsBetweenCommands(t *testing.T) {
	s := newSession(t, nil)
	run(t, s, cmd("mkdir -p sub && cd sub"))
	run(t, s, cmd("export GREETING=hi; declare -A map=([k]=v)"))
	run(t, s, cmd("alias say='echo said'"))
	run(t, s, cmd("twice() { echo $1$1; }"))
	res := run(t, s, cmd(`echo "$PWD $GREETING ${map[k]}" && say x && twice y`))
	assert.Equal(t, filepath.Join(s.opts.Dir, "sub")+" hi v\nsaid x\nyy", res.Content)
	assert.Equal(t, filepath.Join(s.opts.Dir, "sub"), s.Cwd())
}

func TestRun_ShellSetup(t *testing.T) {
	s := newSession(t, func(o *setup) {
		home := strings.TrimPrefix(o.shell.Env[1], "HOME=")
		require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte("export FROM_BASHRC=yes\n"), 0o644))
	})
	cases := []struct{ command, want string }{
		{"echo $FROM_BASHRC", "yes"},
		{"alias git", "alias git='git --no-pager'"},
		{`echo "[$PS2]"`, "[]"},
		{"echo $-", ""}, // checked below: interactive, job control
	}
	for _, tc := range cases[:3] {
		assert.Equal(t, tc.want, run(t, s, cmd(tc.command)).Content, tc.command)
	}
	flags := run(t, s, cmd("echo $-")).Content
	assert.Contains(t, flags, "i", "interactive")
	assert.Contains(t, flags, "m", "job control")
	assert.NotContains(t, run(t, s, cmd("history")).Content, "__as_c", "the trigger line stays out of history")
	assert.Contains(t, run(t, s, cmd("history | tail -3")).Content, "echo $-")
}

func TestRun_CleansTerminalOutput(t *testing.T) {
	s := newSession(t, nil)
	cases := []struct{ command, want string }{
		{`printf '\033[1;31mred\033[0m plain\n'`, "red plain"},
		{`printf '10%%\r50%%\r100%%\n'`, "100%"},
		{`printf 'downloading...\033[2K\rdone\n'`, "done"},
		{`printf 'a\tb\n'`, "a\tb"},
		{"git --version >/dev/null; echo ok", "ok"},
	}
	for _, tc := range cases {
		res := run(t, s, cmd(tc.command))
		assert.Equal(t, tc.want, res.Content, tc.command)
		assert.NotContains(t, res.Content, tc.command, "the command is never echoed")
	}
}

func TestRun_LongCommandReachesBashIntact(t *testing.T) {
	s := newSession(t, nil)
	long := strings.Repeat("x", 10000)
	res := run(t, s, cmd("echo "+long+" | wc -c"))
	assert.Equal(t, "10001", res.Content, "a typed line would be cut at 4095 bytes")
	res = run(t, s, cmd("printf '%s' 'tab\there' | od -c | head -1"))
	assert.Contains(t, res.Content, `\t`, "control characters in a command are not keystrokes")
}

func TestRun_TerminalModeIsRestoredBeforeEachCommand(t *testing.T) {
	s := newSession(t, nil)
	// A program that crashed in raw mode leaves the terminal so; the
	// next command must find it cooked again, as every time it is right.
	for range 2 {
		res := run(t, s, done("stty -echo -icanon -isig ixon; echo set", false))
		require.Equal(t, "set", res.Content)
		mode := " " + strings.Join(strings.Fields(run(t, s, cmd("stty -a")).Content), " ") + " "
		for _, flag := range []string{" echo ", " icanon ", " isig ", " -ixon "} {
			assert.Contains(t, mode, flag)
		}
	}
	assert.Equal(t, "fine", run(t, s, cmd("echo fine")).Content)
}

func TestRun_NoChangeTimeout(t *testing.T) {
	s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = time.Second })
	res := run(t, s, cmd("echo start; sleep 2; echo end"))
	assert.False(t, res.Finished)
	assert.Equal(t, -1, res.Metadata.ExitCode)
	assert.Equal(t, "start", res.Content)
	assert.Equal(t, "\n[The command has no new output after 1 seconds. "+TimeoutMessage+"]", res.Suffix)
	assert.Equal(t, "", res.Prefix)

	res = run(t, s, Request{Command: "", Blocking: true})
	assert.True(t, res.Finished)
	assert.Equal(t, "end", res.Content)
	assert.Equal(t, "", res.Prefix, "a completion is not prefixed")
	assert.Equal(t, suffixCompleted(0), res.Suffix)

	// Blocking disables it.
	res = run(t, s, Request{Command: "sleep 1.5; echo blocked", Blocking: true})
	assert.True(t, res.Finished)
	assert.Equal(t, "blocked", res.Content)
}

func TestRun_HardTimeoutKeepsCommandRunning(t *testing.T) {
	s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = 30 * time.Second })
	res := run(t, s, Request{Command: "for i in 1 2 3; do echo $i; sleep 1; done", Timeout: 500 * time.Millisecond})
	assert.Equal(t, "1", res.Content)
	assert.Equal(t, "", res.Prefix)
	assert.Equal(t, "\n[The command timed out after 0.5 seconds. "+TimeoutMessage+"]", res.Suffix)
	assert.Equal(t, -1, res.Metadata.ExitCode)

	res = run(t, s, Request{Command: "", Timeout: time.Second})
	assert.Equal(t, "2", res.Content)
	assert.Equal(t, prefixContinued, res.Prefix)

	res = run(t, s, cmd("ls"))
	assert.Equal(t, prefixContinued, res.Prefix)
	assert.Equal(t, `
[Your command "ls" is NOT executed. The previous command is still running - You CANNOT send new commands until the previous command is completed. By setting `+"`is_input`"+` to `+"`true`"+`, you can interact with the current process: `+TimeoutMessage+"]", res.Suffix)
	assert.Equal(t, -1, res.Metadata.ExitCode)

	res = run(t, s, done("C-c", true))
	assert.True(t, res.Finished)
	assert.Equal(t, 130, res.Metadata.ExitCode)
	assert.Equal(t, "\n[The command completed with exit code 130. CTRL+C was sent.]", res.Suffix)

	res = run(t, s, cmd("echo after"))
	assert.Equal(t, "after", res.Content)
	assert.Equal(t, 0, res.Metadata.ExitCode)
}

func TestRun_ContinuationShowsOnlyNewOutput(t *testing.T) {
	s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = 30 * time.Second })
	res := run(t, s, Request{Command: "for i in 1 2 3; do echo $i; sleep 0.6; done", Timeout: 300 * time.Millisecond})
	assert.Equal(t, "1", res.Content)
	seen := []string{res.Content}
	for !res.Finished {
		res = run(t, s, Request{Command: "", Timeout: 600 * time.Millisecond})
		if res.Content != "" {
			seen = append(seen, res.Content)
		}
	}
	assert.Equal(t, []string{"1", "2", "3"}, seen, "every line exactly once")
}

func TestRun_InteractiveInput(t *testing.T) {
	s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = time.Second })
	res := run(t, s, cmd(`read -p "Enter name: " name && echo "Hello $name"`))
	assert.Equal(t, "Enter name:", res.Content)
	res = run(t, s, done("John", true))
	assert.Equal(t, "Hello John", res.Content, "the typed input's echo is removed")
	assert.True(t, res.Finished)

	if _, err := exec.LookPath("python3"); err == nil {
		res = run(t, s, cmd(`python3 -c "n = input('Name: '); a = input('Age: '); print(f'Hello {n}, {a}')"`))
		// On a loaded machine python may start later than the no-change
		// timeout: ask for more output, as an agent would.
		for i := 0; res.Content == "" && !res.Finished && i < 10; i++ {
			res = run(t, s, Request{Command: ""})
		}
		assert.Equal(t, "Name:", res.Content)
		res = run(t, s, Request{Command: "Alice", IsInput: false})
		assert.Contains(t, res.Suffix, `Your command "Alice" is NOT executed.`)
		res = run(t, s, Request{Command: "Alice", IsInput: true})
		assert.Equal(t, "Age:", res.Content)
		res = run(t, s, done("25", true))
		assert.Equal(t, "Hello Alice, 25", res.Content)
		assert.Equal(t, 0, res.Metadata.ExitCode)
	}
}

func TestRun_ControlKeys(t *testing.T) {
	s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = time.Second })
	run(t, s, cmd("cat"))
	res := run(t, s, done("C-d", true))
	assert.True(t, res.Finished)
	assert.Equal(t, "\n[The command completed with exit code 0. CTRL+D was sent.]", res.Suffix)

	run(t, s, cmd("sleep 30"))
	res = run(t, s, done("C-z", true))
	assert.True(t, res.Finished)
	assert.Equal(t, 148, res.Metadata.ExitCode)
	assert.Contains(t, res.Content, "Stopped")
	run(t, s, done("kill -9 %1", false))

	// A key at the prompt goes to bash itself.
	res = run(t, s, done("C-c", false))
	assert.Equal(t, 130, res.Metadata.ExitCode)
	assert.Equal(t, "\n[The command completed with exit code 130. CTRL+C was sent.]", res.Suffix)
}

func TestRun_NothingRunning(t *testing.T) {
	s := newSession(t, nil)
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Command: ""}, "ERROR: No previous running command to retrieve logs from."},
		{Request{Command: "  "}, "ERROR: No previous running command to retrieve logs from."},
		{Request{Command: "y", IsInput: true}, "ERROR: No previous running command to interact with."},
		{Request{Command: "C-c", IsInput: true}, "ERROR: No previous running command to interact with."},
	} {
		res := run(t, s, tc.req)
		assert.Equal(t, tc.want, res.Content)
		assert.Equal(t, "", res.Command)
		assert.False(t, res.Finished)
	}
}

func TestRun_MultipleCommandsRejected(t *testing.T) {
	s := newSession(t, nil)
	_, err := s.Run(context.Background(), cmd("echo a\necho b"))
	var multi *shell.MultipleCommandsError
	require.ErrorAs(t, err, &multi)
	assert.Equal(t, []string{"echo a", "echo b"}, multi.Commands)
	assert.Equal(t, "a", run(t, s, cmd("echo a")).Content, "nothing was run")
}

func TestRun_Truncation(t *testing.T) {
	s := newSession(t, nil)
	res := run(t, s, cmd("seq 1 10000"))
	require.Len(t, []rune(res.Content), 30000+len(truncationMarker))
	assert.True(t, strings.HasPrefix(res.Content, "1\n2\n3\n"))
	assert.True(t, strings.HasSuffix(res.Content, "9999\n10000"))
	assert.Contains(t, res.Content, truncationMarker)

	res = run(t, s, Request{Command: "seq 1 20000", Hidden: true})
	assert.Equal(t, 108893, len(res.Content), "hidden output is whole, not even cut to the last lines")
	assert.True(t, res.Hidden)
}

func TestRun_HistoryLimit(t *testing.T) {
	s := newSession(t, nil)
	res := run(t, s, Request{Command: `for i in $(seq 1 50000); do echo "Line $i"; done`, Timeout: time.Minute})
	assert.Equal(t, 0, res.Metadata.ExitCode)
	assert.Equal(t, prefixTruncated(11000), res.Prefix)
	assert.Contains(t, res.Content, "Line 40000")
	assert.Contains(t, res.Content, "Line 50000")
	assert.NotContains(t, res.Content, "Line 39000\n")
}

func TestRun_MemoryBoundedForHugeOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 48 MB through a terminal")
	}
	s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = time.Minute })
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := heap()
	res := run(t, s, Request{Command: "yes 'some output line' | head -n 2800000", Timeout: 2 * time.Minute})
	require.True(t, res.Finished)
	growth := int64(heap()) - int64(before)
	assert.Less(t, growth, int64(s.opts.OutputLimit)+4<<20, "heap grew by %d bytes", growth)
	assert.True(t, strings.HasSuffix(res.Content, "some output line"))
}

func TestRun_RestartsAfterShellDies(t *testing.T) {
	for _, kill := range []string{"exit 3", "kill -9 $$"} {
		t.Run(kill, func(t *testing.T) {
			s := newSession(t, nil)
			run(t, s, cmd("mkdir -p kept && cd kept && export GONE=1"))
			res := run(t, s, cmd(kill))
			assert.True(t, res.Finished)
			assert.Contains(t, res.Suffix, "The shell exited")

			res = run(t, s, cmd(`echo "[$GONE] $PWD"`))
			assert.Equal(t, "[] "+filepath.Join(s.opts.Dir, "kept"), res.Content)
			assert.Contains(t, res.Prefix, "a new shell was started in "+filepath.Join(s.opts.Dir, "kept"))
			res = run(t, s, cmd("echo again"))
			assert.Equal(t, "", res.Prefix, "said once")
		})
	}
}

func TestRun_OutputOfCommandFinishedUnwatchedIsNotLost(t *testing.T) {
	s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = 30 * time.Second })
	res := run(t, s, Request{Command: "sleep 0.5; echo first", Timeout: 100 * time.Millisecond})
	require.False(t, res.Finished)
	time.Sleep(time.Second)
	res = run(t, s, cmd("echo second"))
	assert.Equal(t, "first\nsecond", res.Content)

	// Output of a background job printed while the shell was idle.
	run(t, s, cmd("(sleep 0.3; echo from-background) &"))
	time.Sleep(time.Second)
	res = run(t, s, cmd("echo foreground"))
	assert.Contains(t, res.Content, "from-background")
	assert.Contains(t, res.Content, "foreground")
}

func TestRun_CanceledRequestLeavesCommandRunning(t *testing.T) {
	s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = 30 * time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := s.Run(ctx, cmd("sleep 1; echo late"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	res := run(t, s, cmd(""))
	assert.Equal(t, "late", res.Content, "the output is kept for the next request")
	assert.True(t, res.Finished)
}

func TestSession_CloseEndsEveryProcess(t *testing.T) {
	s := newSession(t, nil)
	res := run(t, s, cmd("sleep 300 &"))
	job := res.Metadata.PID
	require.Greater(t, job, 0)
	res = run(t, s, cmd("nohup sleep 300 >/dev/null 2>&1 & echo $!"))
	lines := strings.Split(res.Content, "\n")
	nohup, err := strconv.Atoi(lines[len(lines)-1])
	require.NoError(t, err)

	closeSession(s)
	for _, pid := range []int{job, nohup} {
		assert.Eventually(t, func() bool {
			return syscall.Kill(pid, 0) != nil
		}, 3*time.Second, 20*time.Millisecond, "pid %d still alive", pid)
	}
	_, err = s.Run(context.Background(), cmd("true"))
	assert.True(t, errors.Is(err, ErrClosed))
}

func TestRun_AsAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("switching users needs root")
	}
	// The user must be able to reach its directory: t.TempDir's parents
	// are private to root.
	dir, err := os.MkdirTemp("", "shell-user-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o777))
	s := newSession(t, func(o *setup) {
		o.shell.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
		o.shell.Dir = dir
	})
	assert.Equal(t, "65534", run(t, s, cmd("id -u")).Content)
	assert.Equal(t, "ok", run(t, s, cmd("touch mine && echo ok")).Content)
	fi, err := os.Stat(filepath.Join(s.opts.Dir, "mine"))
	require.NoError(t, err)
	assert.EqualValues(t, 65534, fi.Sys().(*syscall.Stat_t).Uid)
}

func TestRun_ControlKeyWaitsForTheCommandToEndBeyondAShortNoChangeTimeout(t *testing.T) {
	s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = time.Second })
	// A command that ignores Ctrl-C and ends a little later, as a loop
	// does when the key reaches bash between two of its commands.
	res := run(t, s, cmd(`bash -c 'trap "" INT; sleep 2; echo finished'`))
	require.Equal(t, -1, res.Metadata.ExitCode, "still running after the no-change timeout")
	res = run(t, s, Request{Command: "C-c", IsInput: true})
	assert.Equal(t, 0, res.Metadata.ExitCode, "%+v", res)
	assert.Contains(t, res.Content, "finished")
	assert.Equal(t, "\n[The command completed with exit code 0. CTRL+C was sent.]", res.Suffix)
}

func TestRun_CtrlCIsSentAgainWhenTheCommandGoesOnPrinting(t *testing.T) {
	s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = time.Second })
	// The first Ctrl-C is lost as if it reached an ended command's process
	// group: the trap swallows it, and the loop goes on printing.
	res := run(t, s, Request{Command: `bash -c 'trap "trap - INT" INT; while true; do echo tick; sleep 0.2; done'`, Timeout: time.Second})
	require.Equal(t, -1, res.Metadata.ExitCode)
	res = run(t, s, Request{Command: "C-c", IsInput: true, Timeout: 20 * time.Second})
	assert.Equal(t, 130, res.Metadata.ExitCode, "%+v", res)
	assert.Equal(t, "\n[The command completed with exit code 130. CTRL+C was sent.]", res.Suffix)
}

func TestRun_CtrlCIsSentAgainWhenAQuietLoopGoesOn(t *testing.T) {
	s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = time.Second })
	// Each pass of the loop is a new job. The first job swallows Ctrl-C and
	// ends normally, as if the key had reached an ended job's process
	// group: the loop goes on and prints nothing. Only the next job, in
	// another process group, tells that the key was lost.
	loop := `while true; do bash -c 'if [ -e swallowed ]; then sleep 0.3; else trap "touch swallowed; exit 0" INT; sleep 0.3; fi'; done`
	res := run(t, s, cmd(loop))
	require.Equal(t, -1, res.Metadata.ExitCode, "still running after the no-change timeout")
	res = run(t, s, Request{Command: "C-c", IsInput: true, Timeout: 20 * time.Second})
	assert.Equal(t, 130, res.Metadata.ExitCode, "%+v", res)
	assert.Equal(t, "\n[The command completed with exit code 130. CTRL+C was sent.]", res.Suffix)
	assert.FileExists(t, filepath.Join(s.opts.Dir, "swallowed"), "the first Ctrl-C reached the first job")
}

func TestRun_CtrlCIsNotRepeatedForAProgramThatHandlesIt(t *testing.T) {
	s := newSession(t, func(o *setup) { o.run.NoChangeTimeout = time.Second })
	// A program that counts its Ctrl-Cs and goes on, as a REPL does: one
	// key is one interrupt.
	prog := "import time\nn = 0\nwhile True:\n    try:\n        time.sleep(0.1)\n    except KeyboardInterrupt:\n        n += 1\n        print('got', n, flush=True)\n"
	require.NoError(t, os.WriteFile(filepath.Join(s.opts.Dir, "count.py"), []byte(prog), 0o644))
	res := run(t, s, cmd("python3 count.py"))
	require.Equal(t, -1, res.Metadata.ExitCode)
	res = run(t, s, Request{Command: "C-c", IsInput: true})
	assert.Equal(t, -1, res.Metadata.ExitCode, "%+v", res)
	assert.Contains(t, res.Content, "got 1")
	assert.NotContains(t, res.Content, "got 2")
}
