package swerex

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/actionserver/actionserver/executor"
)

// Defaults of BashInterruptAction.
const (
	defaultInterruptTimeout = 200 * time.Millisecond
	defaultInterruptRetries = 3
	// killWait bounds the wait for a command to end once its processes
	// were killed, which takes the kernel and bash only a moment; a
	// command bash runs itself does not end that way, and bash goes next.
	killWait = time.Second
)

// interrupt serves a BashInterruptAction: Ctrl-C, as many times as asked;
// then, if the command still runs, SIGKILL to its job and to every process
// it started; last, if the command runs inside bash itself and ignores
// Ctrl-C, the shell (the engine starts a new one for the next command).
// Whatever way it ended, no process the command started is left running.
func (s *session) interrupt(ctx context.Context, a action) (observation, error) {
	obs := observation{SessionType: "bash", ExpectString: psOneMarker}
	zero := 0
	obs.ExitCode = &zero
	if !s.running() {
		if s.cur != nil {
			// What the last command printed that nobody has seen yet.
			r, err := s.cur.wait(ctx, 0, nil)
			if err != nil {
				return obs, err
			}
			obs.Output = strings.TrimSpace(r.text)
		}
		return obs, nil
	}
	timeout, retries := defaultInterruptTimeout, defaultInterruptRetries
	if a.Timeout != nil {
		timeout = seconds(*a.Timeout)
	}
	if a.NRetry != nil {
		retries = *a.NRetry
	}
	patterns := compileExpect(a.Expect)
	tree := s.jobTree()

	r, ended, err := s.tryCtrlC(ctx, retries, timeout, patterns)
	if err != nil {
		return obs, err
	}
	if !ended {
		// Ctrl-C was not enough: kill the job's processes, then, for a
		// command bash runs itself, bash.
		tree = append(tree, s.jobTree()...)
		tree.kill()
		r, ended, err = s.waitEnd(ctx, max(timeout, killWait), patterns)
		if err != nil {
			return obs, err
		}
		if !ended {
			if pid := s.es.ShellPID(); pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			r, ended, err = s.waitEnd(ctx, killWait, patterns)
			if err != nil {
				return obs, err
			}
		}
		if !ended {
			return obs, newException(classPexpectTimeout, "Failed to interrupt session")
		}
	}
	if r.done {
		// The command is over; what it started must not outlive it.
		tree.kill()
	}
	obs.Output = strings.TrimSpace(r.text)
	if r.matched >= 0 {
		obs.ExpectString = a.Expect[r.matched]
	}
	return obs, nil
}

// tryCtrlC types Ctrl-C up to retries times, each followed by a wait of
// timeout for the prompt or a pattern; ended reports that one came.
func (s *session) tryCtrlC(ctx context.Context, retries int, timeout time.Duration, patterns []*regexp.Regexp) (waitResult, bool, error) {
	for range retries {
		if err := s.es.Key("C-c"); err != nil {
			if errors.Is(err, executor.ErrNotRunning) {
				return s.waitEnd(ctx, timeout, patterns)
			}
			return waitResult{}, false, err
		}
		r, ended, err := s.waitEnd(ctx, timeout, patterns)
		if err != nil || ended {
			return r, ended, err
		}
	}
	return waitResult{}, false, nil
}

// waitEnd waits for the prompt or a pattern; a timeout is not an error.
func (s *session) waitEnd(ctx context.Context, timeout time.Duration, patterns []*regexp.Regexp) (waitResult, bool, error) {
	r, err := s.cur.wait(ctx, timeout, patterns)
	var tmo *errWaitTimeout
	if errors.As(err, &tmo) {
		return waitResult{}, false, nil
	}
	return r, err == nil, err
}

// jobTree lists what the running command started: its job (none when bash
// runs it itself) with everything below it, and its background jobs.
func (s *session) jobTree() procTree {
	pgrp, err := s.es.Foreground()
	if err != nil {
		pgrp = 0
	}
	if s.cur.since == 0 {
		// The start tick is unknown: the background jobs cannot be told
		// from those of earlier commands, so only the job is ended.
		return commandTree(pgrp, 0, 0)
	}
	return commandTree(pgrp, s.es.ShellPID(), s.cur.since)
}
