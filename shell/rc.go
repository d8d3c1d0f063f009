package shell

import (
	"fmt"
	"strings"
)

// How the server and bash talk, besides the terminal itself:
//
//   - A command is not typed into the terminal. The server writes it to a
//     file and types one fixed line (the trigger) that reads the file into a
//     variable and evals it at top level. So commands of any length and with
//     any bytes reach bash intact (a typed line is cut at 4095 bytes and
//     control characters in it would become signals), history expansion does
//     not mangle '!', and an unclosed quote fails at once instead of leaving
//     bash waiting for more input.
//   - Markers are OSC escape sequences numbered 697 carrying a per-session
//     nonce: "S" (from PS0) when bash starts the command, then from
//     PROMPT_COMMAND "E", the metadata fields separated by "F", and "D".
//     Metadata values are printed as plain text between markers, because an
//     OSC string would end early on bytes that occur inside UTF-8 paths.
//   - Nothing in the prompt forks: only builtins and prompt expansions, so a
//     command's round trip stays near the raw terminal's.
const oscMarker = 697

// markerKinds.
const (
	markStart = 'S'
	markEnd   = 'E'
	markField = 'F'
	markDone  = 'D'
)

// metadata fields, in the order the prompt prints them.
const (
	fieldExitCode = iota
	fieldPID
	fieldUser
	fieldHost
	fieldPWD
	fieldPython
	numFields
)

// triggerLine is what the server types to run the command waiting in the
// command file. It is fixed, so its echo is recognised and dropped, and
// HISTIGNORE keeps it out of history (the command itself is added).
// Everything but the eval runs with stderr discarded so `set -x` does not
// trace it; `|| true` keeps `set -e` from exiting on read's EOF status. It
// must not contain ':' (the HISTIGNORE separator).
const triggerLine = `{ \builtin read -r -d '' __as_c <"$__as_f" || \builtin true; \builtin history -s -- "$__as_c"; __as_rt; } 2>/dev/null; \builtin eval "$__as_c"`

// rcScript returns the rcfile bash starts with.
func rcScript(nonce, cmdFile, dir string) string {
	m := func(kind byte) string { return fmt.Sprintf(`\e]%d;%s;%c\a`, oscMarker, nonce, kind) }
	var b strings.Builder
	b.WriteString(`# Written by action-server for one shell session.
# bash reads only this file when started with --rcfile; read the usual ones.
if [ -f /etc/bash.bashrc ]; then . /etc/bash.bashrc; fi
if [ -f ~/.bashrc ]; then . ~/.bashrc; fi
# Commands are read from a file, never edited on a line: no readline.
set +o emacs +o vi 2>/dev/null
alias git="git --no-pager"
`)
	fmt.Fprintf(&b, "__as_f=%s\n", shellQuote(cmdFile))
	b.WriteString(`__as_u='\u' __as_h='\h'
__as_pc() {
  __as_ec=$?
  \builtin printf '` + m(markEnd) + `%s` + m(markField) + `%s` + m(markField) + `%s` + m(markField) + `%s` + m(markField) + `%s` + m(markField) + `' "$__as_ec" "${!:-}" "${__as_u@P}" "${__as_h@P}" "$PWD"
  \builtin type -P python 2>/dev/null || :
  \builtin printf '` + m(markDone) + `'
  PS1=''
} 2>/dev/null
__as_rt() { [[ $- == *e* ]] && return 0; return "${__as_ec:-0}"; }
unset PROMPT_COMMAND
PROMPT_COMMAND=__as_pc
`)
	fmt.Fprintf(&b, "PS0='%s'\n", m(markStart))
	b.WriteString("PS1=''\nPS2=''\n")
	// In a HISTIGNORE pattern a backslash escapes the next character.
	pattern := strings.ReplaceAll(triggerLine, `\`, `\\`)
	fmt.Fprintf(&b, "HISTIGNORE=\"${HISTIGNORE:+$HISTIGNORE:}\"%s\n", shellQuote(pattern))
	fmt.Fprintf(&b, "\\builtin cd -- %s\n", shellQuote(dir))
	return b.String()
}

// shellQuote quotes s for bash as a single word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
