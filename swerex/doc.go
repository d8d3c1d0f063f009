// Package swerex serves SWE-ReX's remote runtime API (swe-rex 1.4.0, the
// server SWE-agent and mini-swe-agent start in a sandbox as swerex-remote)
// over the executor's shell sessions. It is a front end beside the native
// server: a SWE-ReX session is one of the executor's named sessions, and
// run_in_session is SWE-ReX's policy over the same terminal engine that
// serves OpenHands' run: a timeout raises, check modes, expect patterns,
// and an interrupt that ends the command's whole process tree.
//
// Errors travel as SWE-ReX's do, HTTP 511 with a "swerexception" body
// naming the Python class the client re-raises (errors.go). Where upstream
// is slow or loses data the server does better without changing the wire:
// /is_alive never waits on a command, sessions run in parallel, and a
// timeout's partial output is kept in the exception's extra_info.
package swerex
