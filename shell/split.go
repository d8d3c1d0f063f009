package shell

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// SplitCommands splits text into the top-level commands an agent meant to
// run one by one. Statements joined on one line by ';' or '&', pipelines,
// '&&' and '||' lists, compound commands (loops, if, case, subshells,
// functions), heredocs and backslash continuations stay one command;
// statements on separate lines are separate commands. A comment belongs to
// the command before it. Text that does not parse is one command, so bash
// itself reports the error.
func SplitCommands(text string) []string {
	if strings.TrimSpace(text) == "" {
		return []string{""}
	}
	if plainCommand(text) {
		return []string{text}
	}
	f, err := syntax.NewParser(syntax.KeepComments(false), syntax.Variant(syntax.LangBash)).
		Parse(strings.NewReader(text), "")
	if err != nil || len(f.Stmts) <= 1 {
		return []string{text}
	}

	// Group statements: a statement starting on the line where the previous
	// group ended (after its heredoc bodies) joins that group.
	type span struct{ start, end, endLine int }
	var groups []span
	for _, st := range f.Stmts {
		start, end, endLine := stmtExtent(st)
		if n := len(groups); n > 0 && int(st.Pos().Line()) <= groups[n-1].endLine {
			groups[n-1].end = max(groups[n-1].end, end)
			groups[n-1].endLine = max(groups[n-1].endLine, endLine)
			continue
		}
		groups = append(groups, span{start, end, endLine})
	}
	if len(groups) == 1 {
		return []string{text}
	}

	// Each command runs from its start to the next one's start, so text
	// between them (separators, comments) stays with the earlier one.
	cmds := make([]string, len(groups))
	for i, g := range groups {
		end := len(text)
		if i+1 < len(groups) {
			end = groups[i+1].start
		}
		cmds[i] = strings.TrimRight(text[g.start:end], " \t\r\n")
	}
	return cmds
}

// examineInput reports how text ends, as bash will read it: the
// here-documents it leaves open, whose bodies bash then reads from the
// terminal, or else whether it ends inside another unterminated construct
// (quote, compound command), which bash reports as an "unexpected EOF"
// error.
func examineInput(text string) (open []heredocStop, incomplete bool) {
	if plainCommand(text) {
		return nil, false
	}
	_, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(text), "")
	if err == nil {
		return nil, false
	}
	if open = openHeredocs(text, err); open != nil {
		return open, false
	}
	return nil, syntax.IsIncomplete(err)
}

// stmtExtent returns where a statement starts and ends in the source, with
// the heredoc bodies it owns (which the parser places after the statement's
// own end).
func stmtExtent(st *syntax.Stmt) (start, end, endLine int) {
	start, end, endLine = int(st.Pos().Offset()), int(st.End().Offset()), int(st.End().Line())
	syntax.Walk(st, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok && r.Hdoc != nil {
			if !r.Hdoc.End().IsValid() {
				// An empty body: the delimiter is on the next line.
				endLine = max(endLine, int(st.End().Line())+1)
				return true
			}
			end = max(end, int(r.Hdoc.End().Offset()))
			// The body ends with its newline, so the closing delimiter
			// is on the line where the body ends.
			endLine = max(endLine, int(r.Hdoc.End().Line()))
		}
		return true
	})
	return start, end, endLine
}

// MultipleCommandsError rejects an action that holds several top-level
// commands; its message is the one agents are trained on.
type MultipleCommandsError struct {
	Commands []string
}

func (e *MultipleCommandsError) Error() string {
	var b strings.Builder
	b.WriteString("ERROR: Cannot execute multiple commands at once.\n")
	b.WriteString("Please run each command separately OR chain them into a single command via && or ;\n")
	b.WriteString("Provided commands:")
	for i, c := range e.Commands {
		fmt.Fprintf(&b, "\n(%d) %s", i+1, c)
	}
	return b.String()
}

// heredocStop is a here-document the command opens but does not close:
// bash reads the rest of its body from the terminal, up to the line that
// ends it.
type heredocStop struct {
	word      string // the line that ends the body, quotes removed
	stripTabs bool   // <<-: leading tabs do not count
}

// maxOpenHeredocs bounds the here-documents one command may leave open.
const maxOpenHeredocs = 16

// unclosedHeredocPrefix starts the parser's error for a here-document that
// reaches the end of the text; the rest is the end word, quoted as Go
// quotes strings.
const unclosedHeredocPrefix = "unclosed here-document "

// openHeredocs returns the here-documents text leaves open, in the order
// bash reads their bodies, when closing them makes text a complete command;
// otherwise nil (text lacks something else too, such as a closing quote or
// "fi"). err is the parser's error for text. Each missing end line is
// learned from the parser's error and appended until the text parses; the
// parsed heredocs then say which of them strip tabs.
func openHeredocs(text string, err error) []heredocStop {
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	closed := text
	var words []string
	for range maxOpenHeredocs {
		var perr syntax.ParseError
		if !errors.As(err, &perr) {
			return nil
		}
		quoted, ok := strings.CutPrefix(perr.Text, unclosedHeredocPrefix)
		if !ok {
			return nil
		}
		word, uerr := strconv.Unquote(quoted)
		if uerr != nil || strings.ContainsRune(word, '\n') {
			return nil
		}
		words = append(words, word)
		closed += "\n" + word
		var f *syntax.File
		if f, err = parser.Parse(strings.NewReader(closed), ""); err == nil {
			return heredocsClosedAfter(f, words)
		}
	}
	return nil
}

// heredocsClosedAfter pairs the end words appended to close a command with
// its last here-documents, whose bodies they end.
func heredocsClosedAfter(f *syntax.File, words []string) []heredocStop {
	if len(words) == 0 {
		return nil
	}
	var ops []*syntax.Redirect
	syntax.Walk(f, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok && (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) {
			ops = append(ops, r)
		}
		return true
	})
	if len(ops) < len(words) {
		return nil
	}
	// Bodies are read in the order of their operators.
	slices.SortFunc(ops, func(a, b *syntax.Redirect) int { return int(a.OpPos.Offset()) - int(b.OpPos.Offset()) })
	ops = ops[len(ops)-len(words):]
	stops := make([]heredocStop, len(words))
	for i, w := range words {
		stops[i] = heredocStop{word: w, stripTabs: ops[i].Op == syntax.DashHdoc}
	}
	return stops
}
