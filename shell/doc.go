// Package shell is a terminal engine: persistent interactive bash
// sessions on pseudo-terminals. [Session.Start] starts a command and
// returns at once, [Command.Read] reads its output by byte offset, and
// [Session.Input], [Session.Key], [Session.Signal] and [Session.Resize]
// control it. It knows nothing of HTTP or events, nor of any agent's
// policy: what an agent sees of a command, and when a wait ends, are
// policies built on the exported API, a request's [Turn] (the session's
// request lock), [Command.Tail], [Command.Status] and the foreground job:
// OpenHands' run action in package shell/ohrun, SWE-ReX's run_in_session
// in package swerex.
//
// # Sessions and processes
//
// A Session is what the agent sees: one shell whose state (directory,
// variables, functions) persists from command to command. It owns a
// process, one bash on one terminal, at a time. When bash dies (the agent
// ran `exit`, say), the next request starts a new one in the last known
// directory, and a policy can tell its agent (Turn.TakeRestarts). Commands run one at a time; the
// session remembers the recent ones (history.go), so their output can be
// read by id after they finished.
//
// # How the server talks to bash
//
// Besides the terminal itself:
//
//   - The command file. A command is not typed into the terminal. The
//     server writes it to a file in the session's private directory and
//     types one fixed line, the trigger line, which reads the file into a
//     variable and evals it at top level. So commands of any length and
//     with any bytes reach bash intact (a typed line is cut at 4095 bytes,
//     and control characters in it would become signals), history
//     expansion does not mangle '!', and an unclosed quote fails at once
//     instead of leaving bash waiting for more input. The trigger line is
//     always the same, so its echo is recognised and dropped, and
//     HISTIGNORE keeps it out of bash's history, which gets the command
//     instead. The file starts with a header, the shell's nonce and a
//     sequence number: the trigger runs the command only when the header is
//     newer than the last it ran, so a file bash could not read (removed,
//     swapped, made unreadable) fails the command with a message instead of
//     running the previous one again, and the server then re-creates it.
//     The directory and file belong to the server's user, never to the
//     shell's (who reads them through its group), and are re-created only
//     by Mkdir and O_EXCL|O_NOFOLLOW: a root server never writes through a
//     link the shell's user planted.
//   - Open here-documents. A command such as `cat << EOF` leaves its
//     here-document open on purpose: bash is to read the body as input.
//     The parser finds such commands (split.go); the end lines of their
//     open here-documents follow the command in the command file, after a
//     NUL byte, and the function the trigger line calls reads the bodies
//     from the terminal before the eval, as bash reads a here-document
//     typed at its prompt. What the agent sends as input goes there.
//   - Markers. The prompts print OSC escape sequences numbered 697 that
//     carry a nonce drawn for each process, so no program's output can
//     forge them: "S" (from PS0) when bash starts the command; then, from
//     PS1, "E", the metadata fields separated by "F", and "D"; then "P"
//     and "Q" around a visible prompt, for a person attached to the
//     terminal, which no command's output includes. PS1 is set again at
//     every prompt, so a virtualenv that changes it cannot lose the
//     markers. The rcfile that sets all this up is written by rc.go.
//
// # Completion, exit code and metadata
//
// A command is complete when the "D" marker arrives: bash has printed its
// prompt. PS1 comes after bash's job notices ("[1]+ Done ..."), so those
// stay with the command that was running, as on a terminal. The exit code
// is the $? that PROMPT_COMMAND saved; the trigger line hands that $? on
// to the next command, so `$?` in a command means the previous one's, as
// if typed. A command that ends inside an unclosed construct gets exit
// code 2 (bash would print its prompt with the older $?). The other fields
// are $!, the user, the host, $PWD and $PATH: nothing in the prompt forks,
// so `which python` is resolved by the server in that PATH (which.go).
// Metadata values are plain text between markers, because an OSC string
// would end early on bytes found inside UTF-8 paths. When bash exits while
// a command runs, the command completes with bash's exit status.
//
// # From terminal bytes to observations
//
// One goroutine reads the terminal and feeds a screen (screen.go), which
// interprets escape sequences the way a terminal shows them: a carriage
// return lets a progress bar overwrite itself, cursor movement rewrites
// the last few lines. Only those last lines stay live; older ones, and
// lines that stayed unchanged for a moment (settleQuiet), are final and go
// to a sink that routes them by phase: to the running command's output (a
// bounded ring, ring.go), to the metadata fields, or, at the prompt, to an
// idle buffer, whose text (output of background jobs) goes to the next
// command. Raw bytes also go, unprocessed, to people attached to the
// terminal (raw.go).
//
// An observation of OpenHands' policy (package shell/ohrun) shows what
// the agent has not seen yet: the final output after its last position,
// plus the live lines (Command.Tail), minus what it was shown of them
// already.
//
// # Locks
//
// Session.sem lets one request in at a time: a Turn (a policy's request,
// Session.Start) holds it from start to end, so a request's reads and
// updates of a policy's view do not interleave with another's. Session.mu guards the session's fields
// and may be held while a process's mu is taken, never the other way
// round: the order is sem, then Session.mu, then process.mu. process.mu
// guards everything the terminal reader changes: the screen, the phase,
// the running command and the output and state of every Command run in
// that process (a piped command's fields have a lock of their own).
// Nothing blocks on the terminal, waits for bash or stats files (`which
// python`) while holding process.mu or Session.mu: replacing a dead bash
// marks the session restarting and runs without either.
//
// # Files
//
//   - session.go: Session, its options, start, close and restart.
//   - turn.go: a request's turn, what policies are built on.
//   - control.go: the native API's control of a running command.
//   - history.go: the current command and the recent ones.
//   - command.go: Command, its metadata and its output by offset.
//   - process.go: one bash: start-up, the reader, markers, completion.
//   - rc.go: bash's side of the protocol: the rcfile and the command file.
//   - split.go: the parser: commands in a text, open here-documents.
//   - screen.go, ring.go: terminal rendering and bounded output buffers.
//   - keys.go: control keys by the host's names.
//   - pipe.go: commands on pipes, and the process groups they leave.
//   - cgroup_linux.go: a cgroup per session, where the server may make one,
//     so that closing it ends even what called setsid.
//   - pty_linux.go, raw.go, which.go, tempdir.go: terminal and process
//     plumbing, attached terminals, python lookup, private directories.
package shell
