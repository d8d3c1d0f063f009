package acceptance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ports of tests/runtime/test_bash.py. Commands and assertions are the
// upstream ones; Python literals are translated byte for byte (a Python
// "\n" is a newline here too, a Python "\\n" is a backslash and an n).

const timeoutMessage = "You may wait longer to see additional output by sending empty command '', " +
	"send other commands to interact with the current process, " +
	`send keys ("C-c", "C-z", "C-d") to interrupt/kill the previous command before sending your new command, ` +
	"or use the timeout parameter in execute_bash for future commands."

// timeoutSuffix is the suite's get_timeout_suffix, given the seconds as
// Python prints the float.
func timeoutSuffix(seconds string) string {
	return "[The command timed out after " + seconds + " seconds. " + timeoutMessage + "]"
}

// test_bash_server
func TestBashServer_HardTimeoutThenCtrlCStopsIt(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		port := freePort(t)

		obs := rt.run(run(fmt.Sprintf("python -u -m http.server %d", port)).setHardTimeout(1))
		require.Equal(t, "run", obs.Kind, obs)
		assert.Equal(t, -1, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "Serving HTTP on", obs)
		assert.Contains(t, obs.meta().Suffix, timeoutSuffix("1.0"), obs)

		obs = rt.run(input("C-c").setHardTimeout(30))
		require.Equal(t, "run", obs.Kind, obs)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "Keyboard interrupt received, exiting.", obs)
		assert.Contains(t, obs.meta().workingDir(), rt.workspace(), obs)

		obs = rt.run(run("ls").setHardTimeout(3))
		require.Equal(t, "run", obs.Kind, obs)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.NotContains(t, obs.Content, "Keyboard interrupt received, exiting.", obs)
		assert.Contains(t, obs.meta().workingDir(), rt.workspace(), obs)

		// Run it again: the port is free, so the first server really ended.
		obs = rt.run(run(fmt.Sprintf("python -u -m http.server %d", port)).setHardTimeout(1))
		require.Equal(t, "run", obs.Kind, obs)
		assert.Equal(t, -1, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "Serving HTTP on", obs)
	})
}

// test_bash_background_server
func TestBashBackgroundServer_KeepsServingAfterTheCommand(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		port := freePort(t)

		obs := rt.run(run(fmt.Sprintf("python3 -m http.server %d &", port)))
		require.Equal(t, "run", obs.Kind, obs)
		assert.Equal(t, 0, obs.exitCode(), obs)

		sleep(1)

		curl := rt.run(run(fmt.Sprintf("curl http://localhost:%d", port)))
		require.Equal(t, "run", curl.Kind, curl)
		assert.Equal(t, 0, curl.exitCode(), curl)
		assert.Contains(t, curl.Content, "Directory listing for", curl)

		// Safe here: each sandbox has its own PID namespace.
		kill := rt.run(run(`pkill -f "http.server"`))
		require.Equal(t, "run", kill.Kind, kill)
		assert.Equal(t, 0, kill.exitCode(), kill)
	})
}

// test_multiline_commands
func TestMultilineCommands_ContinuationsAndEmbeddedNewlines(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.runCmd("echo \\\n -e \"foo\"")
		assert.Equal(t, 0, obs.exitCode(), "The exit code should be 0. %v", obs)
		assert.Contains(t, obs.Content, "foo", obs)

		obs = rt.runCmd("echo -e \"hello\nworld\"")
		assert.Equal(t, 0, obs.exitCode(), "The exit code should be 0. %v", obs)
		assert.Contains(t, obs.Content, "hello\nworld", obs)

		obs = rt.runCmd(`echo -e "a\n\n\nz"`)
		assert.Equal(t, 0, obs.exitCode(), "The exit code should be 0. %v", obs)
		assert.Contains(t, obs.Content, "\n\n\n", obs)
	})
}

// test_complex_commands
func TestComplexCommands_LoopAndConditionalsOnOneLine(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		cmd := `count=0; tries=0; while [ $count -lt 3 ]; do result=$(echo "Heads"); tries=$((tries+1)); echo "Flip $tries: $result"; if [ "$result" = "Heads" ]; then count=$((count+1)); else count=0; fi; done; echo "Got 3 heads in a row after $tries flips!";`

		obs := rt.runCmd(cmd)
		assert.Equal(t, 0, obs.exitCode(), "The exit code should be 0. %v", obs)
		assert.Contains(t, obs.Content, "Got 3 heads in a row after 3 flips!", obs)
	})
}

// test_no_ps2_in_output
func TestNoPS2InOutput(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.runCmd("echo -e \"hello\nworld\"")
		assert.Equal(t, 0, obs.exitCode(), "The exit code should be 0. %v", obs)
		assert.Contains(t, obs.Content, "hello\nworld", obs)
		assert.NotContains(t, obs.Content, ">", obs)
	})
}

// test_multiline_command_loop (OpenHands issue 3143). The init command's
// "\<newline>" is inside a non-raw Python string, so Python removes it.
func TestMultilineCommandLoop_ForLoopsOverSeveralLines(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		initCmd := "mkdir -p _modules && for month in {01..04}; do\n" +
			"    for day in {01..05}; do\n" +
			"        touch \"_modules/2024-${month}-${day}-sample.md\"\n" +
			"    done\n" +
			"done && echo \"created files\"\n"
		followUpCmd := "for file in _modules/*.md; do\n" +
			"    new_date=$(echo $file | sed -E 's/2024-(01|02|03|04)-/2024-/;s/2024-01/2024-08/;s/2024-02/2024-09/;s/2024-03/2024-10/;s/2024-04/2024-11/')\n" +
			"    mv \"$file\" \"$new_date\"\n" +
			"done && echo \"success\"\n"

		obs := rt.runCmd(initCmd)
		assert.Equal(t, 0, obs.exitCode(), "The exit code should be 0. %v", obs)
		assert.Contains(t, obs.Content, "created files", obs)

		obs = rt.runCmd(followUpCmd)
		assert.Equal(t, 0, obs.exitCode(), "The exit code should be 0. %v", obs)
		assert.Contains(t, obs.Content, "success", obs)
	})
}

// test_multiple_multiline_commands
func TestMultipleMultilineCommands_RejectedTogetherRunSeparately(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		cmds := []string{
			"ls -l",
			"echo -e \"hello\nworld\"",
			`echo -e "hello it's me"`,
			"echo \\\n    -e 'hello' \\\n    world",
			`echo -e 'hello\nworld\nare\nyou\nthere?'`,
			"echo -e 'hello\nworld\nare\nyou\n\nthere?'",
			"echo -e 'hello\nworld \"'",
		}
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.runCmd(strings.Join(cmds, "\n"))
		assert.Equal(t, "error", obs.Kind, "upstream expects an ErrorObservation; %v", obs)
		assert.Contains(t, obs.Content, "Cannot execute multiple commands at once", obs)

		var results []string
		for _, cmd := range cmds {
			obs := rt.runCmd(cmd)
			require.Equal(t, "run", obs.Kind, obs)
			assert.Equal(t, 0, obs.exitCode(), obs)
			results = append(results, obs.Content)
		}
		assert.Contains(t, results[0], "total 0")
		assert.Contains(t, results[1], "hello\nworld")
		assert.Contains(t, results[2], "hello it's me")
		assert.Contains(t, results[3], "hello world")
		assert.Contains(t, results[4], "hello\nworld\nare\nyou\nthere?")
		assert.Contains(t, results[5], "hello\nworld\nare\nyou\n\nthere?")
		assert.Contains(t, results[6], "hello\nworld \"")
	})
}

// test_cmd_run
func TestCmdRun_CreatesFilesAsTheSandboxUser(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.runCmd("ls -l " + rt.workspace())
		assert.Equal(t, 0, obs.exitCode(), obs)

		obs = rt.runCmd("ls -l")
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "total 0", obs)

		obs = rt.runCmd("mkdir test")
		assert.Equal(t, 0, obs.exitCode(), obs)

		obs = rt.runCmd("ls -l")
		assert.Equal(t, 0, obs.exitCode(), obs)
		// Upstream: 'openhands' when run as openhands, else 'root'.
		assert.Contains(t, obs.Content, v.username(), obs)
		assert.Contains(t, obs.Content, "test", obs)

		obs = rt.runCmd("touch test/foo.txt")
		assert.Equal(t, 0, obs.exitCode(), obs)

		obs = rt.runCmd("ls -l test")
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "foo.txt", obs)

		// Upstream checks the previous observation again here; kept as is.
		rt.runCmd("rm -rf test")
		assert.Equal(t, 0, obs.exitCode(), obs)
	})
}

// test_run_as_user_correct_home_dir
func TestRunAsUser_HomeDirectory(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.runCmd("cd ~ && pwd")
		assert.Equal(t, 0, obs.exitCode(), obs)
		// Upstream: '/home/openhands' or '/root'.
		assert.Contains(t, obs.Content, v.home(), obs)
	})
}

// test_multi_cmd_run_in_single_line
func TestMultiCmdRunInSingleLine(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.runCmd("pwd && ls -l")
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, rt.workspace(), obs)
		assert.Contains(t, obs.Content, "total 0", obs)
	})
}

// test_stateful_cmd
func TestStatefulCmd_DirectoryPersistsAcrossActions(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.runCmd("mkdir -p test")
		assert.Equal(t, 0, obs.exitCode(), "The exit code should be 0. %v", obs)

		obs = rt.runCmd("cd test")
		assert.Equal(t, 0, obs.exitCode(), "The exit code should be 0 for cd test. %v", obs)
		obs = rt.runCmd("pwd")
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, strings.TrimSpace(obs.Content), rt.workspace()+"/test", obs)
	})
}

// test_failed_cmd
func TestFailedCmd_NonZeroExitCode(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.runCmd("non_existing_command")
		assert.NotEqual(t, 0, obs.exitCode(), "The exit code should not be 0 for a failed command. %v", obs)
	})
}

// test_git_operation. Upstream forces run_as_openhands=True: the checks
// are about the sandbox user owning the workspace, so there is no root
// variant.
func TestGitOperation_AsTheSandboxUser(t *testing.T) {
	t.Parallel()
	rt := loadRuntime(t, asUser, runtimeOpts{})
	name := asUser.username()

	obs := rt.runCmd("sudo chown -R " + name + ":root .")
	assert.Equal(t, 0, obs.exitCode(), obs)

	obs = rt.runCmd("ls -alh .")
	assert.Equal(t, 0, obs.exitCode(), obs)
	for _, line := range strings.Split(obs.Content, "\n") {
		if strings.Contains(line, " ..") {
			// the parent directory belongs to root
			assert.Contains(t, line, "root", obs)
			assert.NotContains(t, line, name, obs)
		} else if strings.Contains(line, " .") {
			// the workspace belongs to the user, group root
			assert.Contains(t, line, name, obs)
			assert.Contains(t, line, "root", obs)
		}
	}

	obs = rt.runCmd("git init")
	assert.Equal(t, 0, obs.exitCode(), obs)

	obs = rt.runCmd(`echo "hello" > test_file.txt`)
	assert.Equal(t, 0, obs.exitCode(), obs)

	obs = rt.runCmd("git add test_file.txt")
	assert.Equal(t, 0, obs.exitCode(), obs)

	obs = rt.runCmd("git diff --no-color --cached")
	assert.Equal(t, 0, obs.exitCode(), obs)
	assert.Contains(t, obs.Content, "b/test_file.txt", obs)
	assert.Contains(t, obs.Content, "+hello", obs)

	obs = rt.runCmd(`git commit -m "test commit"`)
	assert.Equal(t, 0, obs.exitCode(), obs)
}

// test_python_version
func TestPythonVersion(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.run(run("python --version"))
		require.Equal(t, "run", obs.Kind, "The observation should be a CmdOutputObservation. %v", obs)
		assert.Equal(t, 0, obs.exitCode(), "The exit code should be 0. %v", obs)
		assert.Contains(t, obs.Content, "Python 3", `The output should contain "Python 3". %v`, obs)
	})
}

// test_pwd_property
func TestPwdProperty(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.runCmd("mkdir -p random_dir")
		assert.Equal(t, 0, obs.exitCode(), obs)

		obs = rt.runCmd("cd random_dir && pwd")
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "random_dir", obs)
	})
}

// test_basic_command
func TestBasicCommand(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.runCmd("echo 'hello world'")
		assert.Contains(t, obs.Content, "hello world", obs)
		assert.Equal(t, 0, obs.exitCode(), obs)

		obs = rt.runCmd("nonexistent_command")
		assert.Equal(t, 127, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "nonexistent_command: command not found", obs)

		obs = rt.runCmd("echo 'hello   world    with\nspecial  chars'")
		assert.Contains(t, obs.Content, "hello   world    with\nspecial  chars", obs)
		assert.Equal(t, 0, obs.exitCode(), obs)

		obs = rt.runCmd(`echo "first" && echo "second" && echo "third"`)
		assert.Contains(t, obs.Content, "first", obs)
		assert.Contains(t, obs.Content, "second", obs)
		assert.Contains(t, obs.Content, "third", obs)
		assert.Equal(t, 0, obs.exitCode(), obs)
	})
}

// test_interactive_command
func TestInteractiveCommand_ReadPromptThenHeredoc(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{startupEnv: []envVar{{"NO_CHANGE_TIMEOUT_SECONDS", "1"}}})

		// This should trigger the soft timeout: no hard timeout is set.
		obs := rt.run(run(`read -p "Enter name: " name && echo "Hello $name"`))
		assert.Contains(t, obs.Content, "Enter name:", obs)
		assert.Contains(t, obs.meta().Suffix, "[The command has no new output after 1 seconds.", obs)

		obs = rt.run(input("John"))
		assert.Contains(t, obs.Content, "Hello John", obs)
		assert.Contains(t, obs.meta().Suffix, "[The command completed with exit code 0.]", obs)

		obs = rt.run(run("cat << EOF\nline 1\nline 2\nEOF"))
		assert.Contains(t, obs.Content, "line 1\nline 2", obs)
		assert.Contains(t, obs.meta().Suffix, "[The command completed with exit code 0.]", obs)
		assert.Equal(t, 0, obs.exitCode(), obs)
	})
}

// test_bash_session.py::test_interactive_command, through the server:
// upstream's BashSession with no_change_timeout_seconds=3. A here-document
// left open waits for its lines as input.
func TestBashSessionInteractiveCommand_OpenHeredocWaitsForItsLines(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{startupEnv: []envVar{{"NO_CHANGE_TIMEOUT_SECONDS", "3"}}})
		noChange := "\n[The command has no new output after 3 seconds. " + timeoutMessage + "]"
		completed := "\n[The command completed with exit code 0.]"

		obs := rt.run(run(`read -p 'Enter name: ' name && echo "Hello $name"`))
		assert.Contains(t, obs.Content, "Enter name:", obs)
		assert.Equal(t, -1, obs.exitCode(), obs)
		assert.Equal(t, noChange, obs.meta().Suffix, obs)
		assert.Equal(t, "", obs.meta().Prefix, obs)

		obs = rt.run(input("John"))
		assert.Contains(t, obs.Content, "Hello John", obs)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Equal(t, completed, obs.meta().Suffix, obs)
		assert.Equal(t, "", obs.meta().Prefix, obs)

		obs = rt.run(run("cat << EOF"))
		assert.Equal(t, -1, obs.exitCode(), obs)
		assert.Equal(t, noChange, obs.meta().Suffix, obs)
		assert.Equal(t, "", obs.meta().Prefix, obs)

		for _, line := range []string{"line 1", "line 2"} {
			obs = rt.run(input(line))
			assert.Equal(t, -1, obs.exitCode(), obs)
			assert.Equal(t, noChange, obs.meta().Suffix, obs)
			assert.Equal(t, "[Below is the output of the previous command.]\n", obs.meta().Prefix, obs)
		}

		obs = rt.run(input("EOF"))
		assert.Contains(t, obs.Content, "line 1", obs)
		assert.Contains(t, obs.Content, "line 2", obs)
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Equal(t, completed, obs.meta().Suffix, obs)
		assert.Equal(t, "", obs.meta().Prefix, obs)
	})
}

// test_long_output
func TestLongOutput(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.run(run(`for i in $(seq 1 5000); do echo "Line $i"; done`).setHardTimeout(10))
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "Line 1", obs)
		assert.Contains(t, obs.Content, "Line 5000", obs)
	})
}

// test_long_output_exceed_history_limit
func TestLongOutput_ExceedsHistoryLimit(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.run(run(`for i in $(seq 1 50000); do echo "Line $i"; done`).setHardTimeout(30))
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.meta().Prefix, "Previous command outputs are truncated", obs)
		assert.Contains(t, obs.Content, "Line 40000", obs)
		assert.Contains(t, obs.Content, "Line 50000", obs)
	})
}

// test_long_output_from_nested_directories
func TestLongOutput_FromNestedDirectories(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})
		setupCmd := `mkdir -p /tmp/test_dir && cd /tmp/test_dir && for i in $(seq 1 100); do mkdir -p "folder_$i"; for j in $(seq 1 100); do touch "folder_$i/file_$j.txt"; done; done`

		obs := rt.run(run(strings.TrimSpace(setupCmd)).setHardTimeout(60))
		assert.Equal(t, 0, obs.exitCode(), obs)

		obs = rt.run(run("ls -R /tmp/test_dir").setHardTimeout(60))
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "folder_1", obs)
		assert.Contains(t, obs.Content, "file_1.txt", obs)
		assert.Contains(t, obs.Content, "folder_100", obs)
		assert.Contains(t, obs.Content, "file_100.txt", obs)
	})
}

// test_command_backslash: `\;` must reach find intact.
func TestCommandBackslash_FindExecSemicolon(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.run(run(`mkdir -p /tmp/test_dir && echo "implemented_function" > /tmp/test_dir/file_1.txt`))
		assert.Equal(t, 0, obs.exitCode(), obs)

		obs = rt.run(run(`find /tmp/test_dir -type f -exec grep -l "implemented_function" {} \;`))
		assert.Equal(t, 0, obs.exitCode(), obs)
		assert.Contains(t, obs.Content, "/tmp/test_dir/file_1.txt", obs)
	})
}

// test_stress_long_output_with_soft_and_hard_timeout. Upstream also caps
// the container at one CPU and 4 GB; nothing caps the server here.
func TestStress_LongOutputWithSoftAndHardTimeout(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{startupEnv: []envVar{{"NO_CHANGE_TIMEOUT_SECONDS", "1"}}})

		for i := range 10 {
			// Memory probes (upstream logs them); only their exit codes count.
			obs := rt.run(run(`ps aux | awk '{printf "%8.1f KB  %s\n", $6, $0}' | sort -nr | grep "/usr/bin/tmux" | grep -v grep | awk '{print $1}'`))
			assert.Equal(t, 0, obs.exitCode(), obs)
			obs = rt.run(run(`ps aux | awk '{printf "%8.1f KB  %s\n", $6, $0}' | sort -nr | grep "action_execution_server" | grep "/openhands/poetry" | grep -v grep | awk '{print $1}'`))
			assert.Equal(t, 0, obs.exitCode(), obs)

			// Soft timeout.
			obs = rt.run(run(`read -p "Do you want to continue? [Y/n] " answer; if [[ $answer == "Y" ]]; then echo "Proceeding with operation..."; echo "Operation completed successfully!"; else echo "Operation cancelled."; exit 1; fi`))
			assert.Contains(t, obs.Content, "Do you want to continue?", obs)
			assert.Equal(t, -1, obs.exitCode(), "still running, waiting for input; %v", obs)

			obs = rt.run(input("Y"))
			assert.Contains(t, obs.Content, "Proceeding with operation...", obs)
			assert.Contains(t, obs.Content, "Operation completed successfully!", obs)
			assert.Equal(t, 0, obs.exitCode(), obs)
			assert.Contains(t, obs.meta().Suffix, "[The command completed with exit code 0.]", obs)

			// Hard timeout with long output: 1000 asterisks a line.
			obs = rt.run(run(fmt.Sprintf(`export i=%d; for j in $(seq 1 100); do echo "Line $j - Iteration $i - $(printf '%%1000s' | tr " " "*")"; sleep 1; done`, i)).setHardTimeout(2))
			assert.Equal(t, -1, obs.exitCode(), obs)
			assert.Contains(t, obs.Content, fmt.Sprintf("Line 1 - Iteration %d", i), obs)

			// The loop still runs: a new command is refused.
			obs = rt.run(run("ls"))
			assert.Equal(t, -1, obs.exitCode(), obs)
			assert.Contains(t, obs.meta().Suffix, "The previous command is still running", obs)

			obs = rt.run(input("C-c"))
			assert.Equal(t, 130, obs.exitCode(), obs)

			obs = rt.run(run("ls"))
			assert.Equal(t, 0, obs.exitCode(), obs)
			if t.Failed() {
				t.Fatalf("iteration %d failed", i)
			}
		}
	})
}

// test_command_output_continuation
func TestCommandOutputContinuation(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.run(run("for i in {1..5}; do echo $i; sleep 3; done").setHardTimeout(2.5))
		assert.Equal(t, "1", strings.TrimSpace(obs.Content), obs)
		assert.Equal(t, "", obs.meta().Prefix, obs)
		assert.Contains(t, obs.meta().Suffix, "[The command timed out after 2.5 seconds.", obs)

		obs = rt.run(run("").setHardTimeout(2.5))
		assert.Contains(t, obs.meta().Prefix, "[Below is the output of the previous command.]", obs)
		assert.Equal(t, "2", strings.TrimSpace(obs.Content), obs)
		assert.Contains(t, obs.meta().Suffix, "[The command timed out after 2.5 seconds.", obs)

		for _, want := range []string{"3", "4", "5"} {
			obs = rt.run(run("").setHardTimeout(2.5))
			assert.Contains(t, obs.meta().Prefix, "[Below is the output of the previous command.]", obs)
			assert.Equal(t, want, strings.TrimSpace(obs.Content), obs)
			assert.Contains(t, obs.meta().Suffix, "[The command timed out after 2.5 seconds.", obs)
		}

		obs = rt.run(run(""))
		assert.Contains(t, obs.meta().Suffix, "[The command completed with exit code 0.]", obs)
	})
}

// test_long_running_command_follow_by_execute
func TestLongRunningCommand_FollowedByExecute(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.run(run("for i in {1..3}; do echo $i; sleep 3; done").setHardTimeout(2.5))
		assert.Contains(t, obs.Content, "1", obs)
		assert.Equal(t, -1, obs.meta().ExitCode, "still running; %v", obs)
		assert.Contains(t, obs.meta().Suffix, "[The command timed out after 2.5 seconds.", obs)
		assert.Equal(t, "", obs.meta().Prefix, obs)

		obs = rt.run(run("").setHardTimeout(2.5))
		assert.Contains(t, obs.Content, "2", obs)
		assert.Equal(t, "[Below is the output of the previous command.]\n", obs.meta().Prefix, obs)
		assert.Contains(t, obs.meta().Suffix, "[The command timed out after 2.5 seconds.", obs)
		assert.Equal(t, -1, obs.meta().ExitCode, "still running; %v", obs)

		// A command that prints nothing, sent while the loop runs.
		obs = rt.run(run("sleep 15").setHardTimeout(2.5))
		assert.NotContains(t, obs.Content, "3", obs)
		assert.Equal(t, "[Below is the output of the previous command.]\n", obs.meta().Prefix, obs)
		assert.Contains(t, obs.meta().Suffix, "The previous command is still running", obs)
		assert.Equal(t, -1, obs.meta().ExitCode, "still running; %v", obs)

		obs = rt.run(run(""))
		assert.Contains(t, obs.Content, "3", obs)
		assert.Contains(t, obs.meta().Suffix, "[The command completed with exit code 0.]", obs)
	})
}

// test_empty_command_errors
func TestEmptyCommand_NothingToRetrieve(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.run(run(""))
		require.Equal(t, "run", obs.Kind, obs)
		assert.Contains(t, obs.Content, "ERROR: No previous running command to retrieve logs from.", obs)
	})
}

const pythonInputScript = `name = input('Enter your name: '); age = input('Enter your age: '); print(f'Hello {name}, you are {age} years old')`

// test_python_interactive_input
func TestPythonInteractiveInput(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.run(run(`python -c "` + pythonInputScript + `"`))
		assert.Contains(t, obs.Content, "Enter your name:", obs)
		assert.Equal(t, -1, obs.meta().ExitCode, "still running; %v", obs)

		obs = rt.run(input("Alice"))
		assert.Contains(t, obs.Content, "Enter your age:", obs)
		assert.Equal(t, -1, obs.meta().ExitCode, obs)

		obs = rt.run(input("25"))
		assert.Contains(t, obs.Content, "Hello Alice, you are 25 years old", obs)
		assert.Equal(t, 0, obs.meta().ExitCode, obs)
		assert.Contains(t, obs.meta().Suffix, "[The command completed with exit code 0.]", obs)
	})
}

// test_python_interactive_input_without_set_input
func TestPythonInteractiveInput_WithoutSetInput(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.run(run(`python -c "` + pythonInputScript + `"`))
		assert.Contains(t, obs.Content, "Enter your name:", obs)
		assert.Equal(t, -1, obs.meta().ExitCode, "still running; %v", obs)

		// Not marked as input: refused, not typed into the program.
		obs = rt.run(&cmdRun{command: "Alice", isInput: false})
		assert.NotContains(t, obs.Content, "Enter your age:", obs)
		assert.Contains(t, obs.meta().Suffix, `Your command "Alice" is NOT executed. The previous command is still running`, obs)
		assert.Equal(t, -1, obs.meta().ExitCode, obs)

		obs = rt.run(input("Alice"))
		assert.Contains(t, obs.Content, "Enter your age:", obs)
		assert.Equal(t, -1, obs.meta().ExitCode, obs)

		obs = rt.run(input("25"))
		assert.Contains(t, obs.Content, "Hello Alice, you are 25 years old", obs)
		assert.Equal(t, 0, obs.meta().ExitCode, obs)
		assert.Contains(t, obs.meta().Suffix, "[The command completed with exit code 0.]", obs)
	})
}

// test_bash_remove_prefix: the echoed command is not part of the output.
func TestBashRemovePrefix_CommandEchoNotInOutput(t *testing.T) {
	eachUser(t, func(t *testing.T, v variant) {
		rt := loadRuntime(t, v, runtimeOpts{})

		obs := rt.run(run("git init && git remote add origin https://github.com/OpenHands/OpenHands"))
		assert.Equal(t, 0, obs.meta().ExitCode, obs)

		obs = rt.run(run("git remote -v"))
		assert.Equal(t, 0, obs.meta().ExitCode, obs)
		assert.Contains(t, obs.Content, "https://github.com/OpenHands/OpenHands", obs)
		assert.NotContains(t, obs.Content, "git remote -v", obs)
	})
}
