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
	markStale     = 'X' // the command file was not this command's
)

// seqDigits is the width of the sequence number in the command file's
// header.
const seqDigits = 20

// staleMessage is what a command gets when bash could not read it: the
// command file was missing, unreadable or left from an earlier command.
// Nothing runs; the server mends the file before the next command.
const staleMessage = "action-server: this command did not reach the shell (its command file was missing, unreadable or out of date), so nothing was run; send it again"

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
	// The file's first line is a header: the shell's nonce, then the
	// command's sequence number in 20 digits (see cmdFile). __as_in runs
	// the command only when the header is this shell's and its number is
	// higher than the last one run: a file bash cannot read, or one left
	// from an earlier command (removed, swapped, made unreadable), would
	// otherwise leave the last command in __as_c to run a second time.
	// Headers of one shell have one length and differ only in digits, so
	// a string comparison orders them, in any locale, without the cost of
	// arithmetic.
	fmt.Fprintf(&b, "__as_k=%s\n__as_l=%s\n", shellQuote(nonce), shellQuote(nonce+strings.Repeat("0", seqDigits)))
	fmt.Fprintf(&b, "__as_stale() { \\builtin printf '\\e]%d;%%s;%c\\a' \"$__as_k\"; "+
		"\\builtin printf '%%s\\n' %s >&2; \\builtin return 1; }\n",
		oscMarker, markStale, shellQuote(staleMessage))
	header := len(nonce) + seqDigits
	fmt.Fprintf(&b, `__as_in() {
  __as_c= __as_h=
  { \builtin read -r -d '' __as_c && IFS= \builtin read -r -d '' __as_h; } <"$__as_f" || \builtin true
  __as_s=${__as_c:0:%d}
  if [[ $__as_s == "$__as_k"* && $__as_s > $__as_l ]]; then
    __as_l=$__as_s __as_c=${__as_c:%d}
  else
    __as_c=__as_stale __as_h=
    \builtin return 0
  fi
`, header, header+1)
	b.WriteString(`  [[ -z $__as_h ]] || __as_hd
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

// commandFile returns what the command file holds for c after its header
// line (which cmdFile.write adds): its text, then, if it leaves
// here-documents open, a NUL byte and a line for each (see rcScript). Bash
// cannot hold a NUL in a variable, so text ends at one.
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
