package ohrun

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// The texts below are the ones OpenHands agents are prompted and trained
// with; they must stay byte for byte.

// TimeoutMessage tells the agent what it can do about a command that has
// not finished.
const TimeoutMessage = "You may wait longer to see additional output by sending empty command '', " +
	"send other commands to interact with the current process, " +
	`send keys ("C-c", "C-z", "C-d") to interrupt/kill the previous command before sending your new command, ` +
	"or use the timeout parameter in execute_bash for future commands."

const (
	msgNoCommandForLogs  = "ERROR: No previous running command to retrieve logs from."
	msgNoCommandForInput = "ERROR: No previous running command to interact with."
	prefixContinued      = "[Below is the output of the previous command.]\n"
	truncationMarker     = "\n[... Observation truncated due to length ...]\n"
)

func suffixCompleted(exitCode int) string {
	return fmt.Sprintf("\n[The command completed with exit code %d.]", exitCode)
}

func suffixCompletedKey(exitCode int, key string) string {
	return fmt.Sprintf("\n[The command completed with exit code %d. CTRL+%s was sent.]",
		exitCode, strings.ToUpper(key[len(key)-1:]))
}

func suffixNoChange(seconds string) string {
	return fmt.Sprintf("\n[The command has no new output after %s seconds. %s]", seconds, TimeoutMessage)
}

func suffixHardTimeout(seconds string) string {
	return fmt.Sprintf("\n[The command timed out after %s seconds. %s]", seconds, TimeoutMessage)
}

func suffixNotExecuted(command string) string {
	return fmt.Sprintf("\n[Your command \"%s\" is NOT executed. The previous command is still running - "+
		"You CANNOT send new commands until the previous command is completed. "+
		"By setting `is_input` to `true`, you can interact with the current process: %s]", command, TimeoutMessage)
}

func prefixTruncated(lines int) string {
	return fmt.Sprintf("[Previous command outputs are truncated. Showing the last %d lines of the output below.]\n", lines)
}

func suffixShellExited(status int, cwd string) string {
	return fmt.Sprintf("\n[The command completed with exit code %d.]\n[The shell exited; the next command will run in a new shell in %s.]", status, cwd)
}

func prefixRestarted(status int, cwd string) string {
	return fmt.Sprintf("[The previous shell exited (status %d), so a new shell was started in %s. "+
		"Variables, functions and aliases set in the old shell are gone.]\n", status, cwd)
}

// formatSeconds prints a setting in whole seconds as an integer, as the
// host's integer settings print, and anything else as a Python float.
func formatSeconds(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return pyfmt.Float(v)
}
