package shell

import (
	"fmt"
	"strings"
)

// This file is bash's side of the protocol the package documentation
// describes: the rcfile that sets up the prompts and markers, and what the
// command file holds.

// oscMarker numbers the OSC escape sequences that carry the markers.
const oscMarker = 697

// markerKinds.
const (
	markStart     = 'S'
	markEnd       = 'E'
	markField     = 'F'
	markDone      = 'D'
	markPrompt    = 'P' // a visible prompt follows, for people attached
	markPromptEnd = 'Q'
)

// metadata fields, in the order the prompt prints them.
const (
	fieldExitCode = iota
	fieldPID
	fieldUser
	fieldHost
	fieldPWD
	fieldPath
	numFields
)

// triggerLine is what the server types to run the command waiting in the
// command file. It is fixed, so its echo is recognised and dropped, and
// HISTIGNORE keeps it out of history (the command itself is added by
// __as_in). __as_in runs with stderr discarded so `set -x` does not trace
// it, and __as_rt gives the command the previous command's $?. (A
// { ...; } group before the eval would confuse bash's parser after a syntax
// error inside the eval; a function call does not.) It must not contain
// ':', the HISTIGNORE separator.
const triggerLine = `__as_in 2>/dev/null; __as_rt; \builtin eval "$__as_c"`

// rcScript returns the rcfile bash starts with.
func rcScript(nonce, cmdFile, dir string) string {
	m := func(kind byte) string { return fmt.Sprintf(`\e]%d;%s;%c\a`, oscMarker, nonce, kind) }
	// The metadata, then a prompt for people attached to the terminal,
	// between markers that keep it out of every command's output.
	ps1 := m(markEnd) + `${__as_ec}` + m(markField) + `${!:-}` + m(markField) + `\u` + m(markField) +
		`\h` + m(markField) + `${PWD}` + m(markField) + `${PATH:-}` + m(markDone) +
		m(markPrompt) + `\u@\h:\w\$ ` + m(markPromptEnd)
	var b strings.Builder
	b.WriteString(`# Written by action-server for one shell session.
# With --rcfile bash reads this file instead of ~/.bashrc, so read it here.
# (It has read /etc/bash.bashrc already where it was built to, as Debian's
# is; reading that again would run it twice, doubling what it adds to PATH.)
if [ -f ~/.bashrc ]; then . ~/.bashrc; fi
# Commands are read from a file, never edited on a line: no readline.
set +o emacs +o vi 2>/dev/null
alias git="git --no-pager"
`)
	fmt.Fprintf(&b, "__as_f=%s\n", shellQuote(cmdFile))
	// PS1 is set again at every prompt, so a virtualenv's change to it
	// cannot break the markers.
	fmt.Fprintf(&b, "__as_ps1=%s\n", shellQuote(ps1))
	// The command file holds the command and, after a NUL byte, one line
	// per here-document the command leaves open: "-" (<<-, leading tabs
	// do not count) or "+", then the line that ends its body. __as_hd
	// reads those bodies from the terminal, as bash reads a here-document
	// typed at its prompt, and appends them to the command. The second
	// read runs only when the first one stopped at a NUL byte (read then
	// succeeds): each read costs bash several microseconds, and most
	// commands leave no here-document open.
	b.WriteString(`__as_in() {
  __as_h=
  { \builtin read -r -d '' __as_c && IFS= \builtin read -r -d '' __as_h; } <"$__as_f" || \builtin true
  [[ -z $__as_h ]] || __as_hd
  \builtin history -s -- "$__as_c"
}
__as_hd() {
  \builtin local s l t
  while [[ -n $__as_h ]]; do
    s=${__as_h%%$'\n'*}
    __as_h=${__as_h#*$'\n'}
    while :; do
      IFS= \builtin read -r l || { __as_h=; \builtin return 0; }
      __as_c+=$'\n'$l
      t=$l
      if [[ $s == -* ]]; then
        while [[ $t == $'\t'* ]]; do t=${t#$'\t'}; done
      fi
      [[ $t == "${s:1}" ]] && \builtin break
    done
  done
  \builtin return 0
}
__as_pc() { __as_ec=$?; PS1=$__as_ps1; } 2>/dev/null
__as_rt() { [[ $- == *e* ]] && return 0; return "${__as_ec:-0}"; }
unset PROMPT_COMMAND
PROMPT_COMMAND=__as_pc
`)
	fmt.Fprintf(&b, "PS0='%s'\n", m(markStart))
	b.WriteString("PS1=$__as_ps1\nPS2=''\n")
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

// commandFile returns what the command file holds for c: its text, then,
// if it leaves here-documents open, a NUL byte and a line for each (see
// rcScript). Bash cannot hold a NUL in a variable, so text ends at one.
func commandFile(c *Command) string {
	text, _, _ := strings.Cut(c.Text, "\x00")
	if len(c.heredocs) == 0 {
		return text
	}
	var b strings.Builder
	b.WriteString(text)
	b.WriteByte(0)
	for _, h := range c.heredocs {
		if h.stripTabs {
			b.WriteByte('-')
		} else {
			b.WriteByte('+')
		}
		b.WriteString(h.word)
		b.WriteByte('\n')
	}
	return b.String()
}
