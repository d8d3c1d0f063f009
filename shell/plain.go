package shell

import "strings"

// plainCommand reports whether text is one simple, complete command that
// needs no parsing: one line of words made of characters with no meaning
// to the shell's grammar, none of them a reserved word. Most commands an
// agent sends are like this, and parsing one costs more CPU than the rest
// of a short command's round trip in the server.
func plainCommand(text string) bool {
	if text == "" {
		return false
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte(" _-./:=,+@%", c) >= 0:
		default:
			return false
		}
	}
	for w := range strings.FieldsSeq(text) {
		if reservedWords[w] {
			return false
		}
	}
	return true
}

// reservedWords are bash's reserved words made of plain characters; any of
// them may open or close a compound command.
var reservedWords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true, "esac": true,
	"for": true, "select": true, "while": true, "until": true, "do": true, "done": true,
	"in": true, "function": true, "time": true, "coproc": true,
}
