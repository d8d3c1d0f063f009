package swerex

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// SWE-ReX's run_in_session policy over the engine's session: a command
// runs until the prompt returns or one of the expect patterns shows up; a
// timeout raises (the command keeps running, for an interrupt to end);
// the exit code is checked as the action asks.

// running reports whether the session's last command still runs.
func (s *session) running() bool {
	if s.cur == nil {
		return false
	}
	select {
	case <-s.cur.cmd.Done():
		return false
	default:
		return true
	}
}

// run serves a BashAction.
func (s *session) run(ctx context.Context, a action, bash string) (observation, error) {
	command := *a.Command
	interactive := a.IsInteractiveCommand || a.IsInteractiveQuit
	obs := observation{SessionType: "bash"}

	if !s.running() {
		if !interactive {
			if err := checkSyntax(ctx, bash, command); err != nil {
				return obs, err
			}
		}
		if strings.TrimSpace(command) == "" {
			// Nothing to run: the prompt comes straight back, and nothing
			// failed.
			obs.ExpectString = psOneMarker
			if a.Check != "ignore" || interactive {
				zero := 0
				obs.ExitCode = &zero
			}
			return obs, nil
		}
		since := clockTicks()
		c, err := s.es.Start(ctx, command)
		if err != nil {
			return obs, err
		}
		s.cur = &cursor{cmd: c, since: since}
	} else if err := s.es.Input(command, true); err != nil {
		// What runs (an interactive program, a command that timed out)
		// reads the line, as upstream types it into the terminal.
		return obs, err
	}

	var timeout time.Duration
	if a.Timeout != nil {
		timeout = seconds(*a.Timeout)
	}
	r, err := s.cur.wait(ctx, timeout, compileExpect(a.Expect))
	var tmo *errWaitTimeout
	if errors.As(err, &tmo) {
		exc := newException(classCommandTimeout, "timeout after %s seconds while running command %s", pyfmt.Float(*a.Timeout), pyfmt.String(command))
		// Not in upstream's reply, which the client ignores: what the
		// command printed before the deadline, for whoever wants it.
		exc.ExtraInfo = map[string]any{"output": tmo.partial}
		return obs, exc
	}
	if err != nil {
		return obs, err
	}
	return s.finish(a, command, r)
}

// finish shapes a finished wait into the observation a BashAction gets.
func (s *session) finish(a action, command string, r waitResult) (observation, error) {
	obs := observation{SessionType: "bash", Output: r.text, ExpectString: psOneMarker}
	if r.matched >= 0 {
		obs.ExpectString = a.Expect[r.matched]
	}
	if a.IsInteractiveCommand || a.IsInteractiveQuit {
		if a.IsInteractiveCommand {
			// The program echoes the line it was sent; upstream drops it.
			obs.Output = strings.TrimSpace(strings.TrimPrefix(strings.TrimLeft(obs.Output, " \t\r\n\v\f"), command))
		}
		zero := 0
		obs.ExitCode = &zero
		return obs, nil
	}
	if a.Check == "ignore" {
		return obs, nil
	}
	if !r.done {
		// A pattern matched while the command still runs: there is no exit
		// code yet, as upstream finds none.
		if a.Check == "raise" {
			return obs, newException(classNoExitCode, "timeout while getting exit code")
		}
		return obs, nil
	}
	code := 0
	if s.cur != nil {
		if ec := s.cur.cmd.Info().ExitCode; ec != nil {
			code = *ec
		}
	}
	obs.ExitCode = &code
	if a.Check == "raise" && code != 0 {
		msg := fmt.Sprintf("Command %s failed with exit code %d. Here is the output:\n%s", pyfmt.String(command), code, pyfmt.String(obs.Output))
		if a.ErrorMsg != "" {
			msg = a.ErrorMsg + ": " + msg
		}
		return obs, &Exception{ClassPath: classNonZeroExit, Message: msg}
	}
	return obs, nil
}

// checkSyntax runs `bash -n` on the command, as upstream does before it
// types one, so a command that would leave bash waiting for more input
// (an unclosed quote) is refused with bash's own words.
func checkSyntax(ctx context.Context, bash, command string) error {
	cmd := exec.CommandContext(ctx, bash, "-n")
	cmd.Args[0] = "bash" // its messages start with $0, "bash:" upstream
	cmd.Stdin = strings.NewReader(command + "\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return fmt.Errorf("check the command's syntax with %s -n: %w", bash, err)
	}
	out, errText := backslashReplace([]byte(stdout.String())), backslashReplace([]byte(stderr.String()))
	msg := fmt.Sprintf("Error (exit code %d) while checking bash command \n%s\n---- Stderr ----\n%s\n---- Stdout ----\n%s",
		exit.ExitCode(), pyfmt.String(command), errText, out)
	return &Exception{ClassPath: classSyntax, Message: msg, ExtraInfo: map[string]any{"bash_stdout": out, "bash_stderr": errText}}
}
