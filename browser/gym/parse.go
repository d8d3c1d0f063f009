// Package gym is BrowserGym's action language, as OpenHands agents write it
// for browse_interactive: Python-style calls (Parse) of a fixed action set
// (Names), whose arguments bind to the parameters by Python's rules. Run
// performs a program call by call through whoever drives the page and words
// the first failure as BrowserGym does; the argument helpers (StringArg and
// the like) and Errorf give the Python exceptions an agent expects. It knows
// no browser.
package gym

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// A program is Python-style function calls, one or several, separated by
// whitespace, newlines or semicolons, with '#' comments.
// Arguments are literals only (strings, numbers, True/False/None, lists,
// tuples and dicts), positional first, then keyword arguments.
//
// Argument values are plain Go values: string, int64, float64, bool, nil
// (None), List, Tuple and Dict.

// Call is one function call of an action program.
type Call struct {
	Name   string
	Args   []any
	Kwargs []Kwarg
	// Src is the source text of the call, as written.
	Src string
}

// Kwarg is a keyword argument of a Call.
type Kwarg struct {
	Name  string
	Value any
}

// List is a Python list literal.
type List []any

// Tuple is a Python tuple literal.
type Tuple []any

// DictItem is one key: value pair of a Dict.
type DictItem struct {
	Key   any
	Value any
}

// Dict is a Python dict literal, in source order.
type Dict []DictItem

// PyRepr is the list's Python repr.
func (l List) PyRepr() string { return "[" + pyfmt.Join(l) + "]" }

// PyRepr is the tuple's Python repr, with the trailing comma of a
// one-element tuple.
func (t Tuple) PyRepr() string {
	if len(t) == 1 {
		return "(" + pyfmt.Repr(t[0]) + ",)"
	}
	return "(" + pyfmt.Join(t) + ")"
}

// PyRepr is the dict's Python repr, in source order.
func (d Dict) PyRepr() string {
	parts := make([]string, len(d))
	for i, it := range d {
		parts[i] = pyfmt.Repr(it.Key) + ": " + pyfmt.Repr(it.Value)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// SyntaxError reports where an action program stops being valid.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s (line %d, column %d)", e.Msg, e.Line, e.Col)
}

// Parse parses an action program into its calls. It returns a *SyntaxError
// when the program is not valid.
func Parse(src string) ([]Call, error) {
	p := &parser{src: src, line: 1, col: 1}
	var calls []Call
	for {
		p.skipSpace()
		if p.eof() {
			return calls, nil
		}
		if p.peek() == ';' {
			p.next()
			continue
		}
		c, err := p.call()
		if err != nil {
			return nil, err
		}
		calls = append(calls, c)
	}
}

type parser struct {
	src       string
	pos       int
	line, col int
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

func (p *parser) peek() rune {
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	return r
}

func (p *parser) next() rune {
	r, n := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += n
	if r == '\n' {
		p.line++
		p.col = 1
	} else {
		p.col++
	}
	return r
}

func (p *parser) errorf(format string, args ...any) error {
	return &SyntaxError{Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)}
}

// skipSpace skips blanks, new lines and comments.
func (p *parser) skipSpace() {
	for !p.eof() {
		switch r := p.peek(); {
		case r == '#':
			for !p.eof() && p.peek() != '\n' {
				p.next()
			}
		case unicode.IsSpace(r):
			p.next()
		default:
			return
		}
	}
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool  { return isIdentStart(r) || unicode.IsDigit(r) }

func (p *parser) ident() string {
	start := p.pos
	for !p.eof() && isIdentPart(p.peek()) {
		p.next()
	}
	return p.src[start:p.pos]
}

func (p *parser) expect(r rune) error {
	p.skipSpace()
	if p.eof() {
		return p.errorf("expected '%c' but the input ended", r)
	}
	if got := p.peek(); got != r {
		return p.errorf("expected '%c' but found '%c'", r, got)
	}
	p.next()
	return nil
}

func (p *parser) call() (Call, error) {
	start := p.pos
	if !isIdentStart(p.peek()) {
		return Call{}, p.errorf("expected a function call but found '%c'", p.peek())
	}
	c := Call{Name: p.ident()}
	p.skipSpace()
	if p.eof() || p.peek() != '(' {
		return Call{}, p.errorf("expected '(' after %s", c.Name)
	}
	p.next()
	for {
		p.skipSpace()
		if p.eof() {
			return Call{}, p.errorf("expected ')' to close %s( but the input ended", c.Name)
		}
		if p.peek() == ')' {
			p.next()
			break
		}
		if err := p.argument(&c); err != nil {
			return Call{}, err
		}
		p.skipSpace()
		if p.eof() {
			return Call{}, p.errorf("expected ')' to close %s( but the input ended", c.Name)
		}
		switch p.peek() {
		case ',':
			p.next()
		case ')':
		default:
			return Call{}, p.errorf("expected ',' or ')' but found '%c'", p.peek())
		}
	}
	c.Src = p.src[start:p.pos]
	return c, nil
}

// argument parses one positional or keyword argument into c.
func (p *parser) argument(c *Call) error {
	if isIdentStart(p.peek()) {
		// A keyword argument, or a bare True/False/None.
		save := *p
		name := p.ident()
		p.skipSpace()
		if !p.eof() && p.peek() == '=' {
			p.next()
			p.skipSpace()
			v, err := p.value()
			if err != nil {
				return err
			}
			c.Kwargs = append(c.Kwargs, Kwarg{Name: name, Value: v})
			return nil
		}
		*p = save
	}
	if len(c.Kwargs) > 0 {
		return p.errorf("positional argument follows keyword argument")
	}
	v, err := p.value()
	if err != nil {
		return err
	}
	c.Args = append(c.Args, v)
	return nil
}

func (p *parser) value() (any, error) {
	if p.eof() {
		return nil, p.errorf("expected a value but the input ended")
	}
	switch r := p.peek(); {
	case r == '"' || r == '\'':
		return p.str()
	case r == '[':
		p.next()
		items, err := p.items(']')
		return List(items), err
	case r == '(':
		p.next()
		items, err := p.items(')')
		return Tuple(items), err
	case r == '{':
		p.next()
		return p.dict()
	case r == '-' || r == '+' || r == '.' || (r >= '0' && r <= '9'):
		return p.number()
	case isIdentStart(r):
		switch word := p.ident(); word {
		case "True":
			return true, nil
		case "False":
			return false, nil
		case "None":
			return nil, nil
		default:
			return nil, p.errorf("unexpected name %q: only literal values are allowed as arguments", word)
		}
	default:
		return nil, p.errorf("unexpected character '%c'", r)
	}
}

// items parses comma-separated values up to the closing rune.
func (p *parser) items(closing rune) ([]any, error) {
	items := []any{}
	for {
		p.skipSpace()
		if p.eof() {
			return nil, p.errorf("expected '%c' but the input ended", closing)
		}
		if p.peek() == closing {
			p.next()
			return items, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		items = append(items, v)
		p.skipSpace()
		if !p.eof() && p.peek() == ',' {
			p.next()
			continue
		}
		if err := p.expect(closing); err != nil {
			return nil, err
		}
		return items, nil
	}
}

func (p *parser) dict() (Dict, error) {
	d := Dict{}
	for {
		p.skipSpace()
		if p.eof() {
			return nil, p.errorf("expected '}' but the input ended")
		}
		if p.peek() == '}' {
			p.next()
			return d, nil
		}
		if r := p.peek(); r != '"' && r != '\'' {
			return nil, p.errorf("dict keys must be strings")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		d = append(d, DictItem{Key: k, Value: v})
		p.skipSpace()
		if !p.eof() && p.peek() == ',' {
			p.next()
			continue
		}
		if err := p.expect('}'); err != nil {
			return nil, err
		}
		return d, nil
	}
}

func (p *parser) number() (any, error) {
	line, col := p.line, p.col
	start := p.pos
	if r := p.peek(); r == '-' || r == '+' {
		p.next()
	}
	digits := func() int {
		n := 0
		for !p.eof() && (p.peek() >= '0' && p.peek() <= '9' || p.peek() == '_') {
			p.next()
			n++
		}
		return n
	}
	n := digits()
	isFloat := false
	if !p.eof() && p.peek() == '.' {
		isFloat = true
		p.next()
		n += digits()
	}
	if n == 0 {
		return nil, &SyntaxError{Line: line, Col: col, Msg: "invalid number"}
	}
	if !p.eof() && (p.peek() == 'e' || p.peek() == 'E') {
		isFloat = true
		p.next()
		if r := p.peek(); r == '-' || r == '+' {
			p.next()
		}
		if digits() == 0 {
			return nil, &SyntaxError{Line: line, Col: col, Msg: "invalid number"}
		}
	}
	text := strings.ReplaceAll(p.src[start:p.pos], "_", "")
	if !isFloat {
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !math.IsInf(f, 0) {
		return nil, &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf("invalid number %q", text)}
	}
	return f, nil
}

// str parses a Python string literal, single, double or triple quoted, with
// Python's escape sequences.
func (p *parser) str() (string, error) {
	line, col := p.line, p.col
	q := p.next()
	triple := strings.HasPrefix(p.src[p.pos:], string([]rune{q, q}))
	if triple {
		p.next()
		p.next()
	}
	var b strings.Builder
	for {
		if p.eof() {
			return "", &SyntaxError{Line: line, Col: col, Msg: "unterminated string literal"}
		}
		r := p.next()
		switch {
		case r == q && !triple:
			return b.String(), nil
		case r == q && strings.HasPrefix(p.src[p.pos:], string([]rune{q, q})):
			p.next()
			p.next()
			return b.String(), nil
		case r == '\n' && !triple:
			return "", &SyntaxError{Line: line, Col: col, Msg: "unterminated string literal"}
		case r == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		default:
			b.WriteRune(r)
		}
	}
}

func (p *parser) escape(b *strings.Builder) error {
	if p.eof() {
		return p.errorf("unterminated string literal")
	}
	r := p.next()
	simple := map[rune]string{
		'\n': "", '\\': "\\", '\'': "'", '"': "\"", 'a': "\a", 'b': "\b",
		'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v",
	}
	if s, ok := simple[r]; ok {
		b.WriteString(s)
		return nil
	}
	hex := func(n int) error {
		if p.pos+n > len(p.src) {
			return p.errorf("truncated \\%c escape", r)
		}
		v, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32)
		if err != nil {
			return p.errorf("truncated \\%c escape", r)
		}
		for range n {
			p.next()
		}
		if v > unicode.MaxRune {
			return p.errorf("illegal Unicode character")
		}
		b.WriteRune(rune(v))
		return nil
	}
	switch {
	case r == 'x':
		return hex(2)
	case r == 'u':
		return hex(4)
	case r == 'U':
		return hex(8)
	case r >= '0' && r <= '7':
		v := r - '0'
		for i := 0; i < 2 && !p.eof() && p.peek() >= '0' && p.peek() <= '7'; i++ {
			v = v*8 + (p.next() - '0')
		}
		b.WriteRune(v)
		return nil
	default:
		// Python keeps unknown escapes as they are.
		b.WriteRune('\\')
		b.WriteRune(r)
		return nil
	}
}
