package shell

import (
	"strings"
	"unicode/utf8"
)

// Control keys, named as the host names them ("C-c"), sent as the bytes
// a terminal sends for them.

// ctrlC is the byte Ctrl-C sends.
const ctrlC = 0x03

// specialKey reports whether cmd names a control key ("C-c", "C-d", ...)
// and returns the byte a terminal sends for it.
func specialKey(cmd string) (byte, bool) {
	if !isSpecial(cmd) {
		return 0, false
	}
	r, _ := utf8.DecodeLastRuneInString(cmd)
	switch {
	case r >= 'a' && r <= 'z':
		return byte(r) & 0x1f, true
	case r >= '@' && r <= '_':
		return byte(r) & 0x1f, true
	case r == '?':
		return 0x7f, true
	case r == ' ':
		return 0, true
	}
	return 0, false
}

// isSpecial is the host's rule for a key name: "C-" and one character.
func isSpecial(cmd string) bool {
	return strings.HasPrefix(cmd, "C-") && utf8.RuneCountInString(cmd) == 3
}

// ControlKey reports whether name is a control key's name as the host
// writes it ("C-c", "C-d", ...) and returns the byte a terminal sends for it.
func ControlKey(name string) (byte, bool) { return specialKey(name) }

// IsKeyName reports whether name has the form of a key's name: "C-" and
// one character, whether or not the key exists.
func IsKeyName(name string) bool { return isSpecial(name) }
