package gym

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// The functions of BrowserGym's default action set (subsets chat, infeas,
// bid, nav and tab, plus noop), with Python's argument binding so that a
// wrong call fails with the TypeError an agent expects.

// Error is an error of an action, shown to the agent as "<Kind>: <Msg>"
// like a Python exception.
type Error struct {
	Kind string
	Msg  string
}

func (e *Error) Error() string { return e.Kind + ": " + e.Msg }

// Errorf returns an *Error of the given kind ("TypeError", "ValueError",
// ...).
func Errorf(kind, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Text formats an action's error as BrowserGym's step reports it:
// "<ExceptionType>: <message>", and "Error: ..." for an error that is no
// *Error.
func Text(err error) string {
	if ae, ok := errors.AsType[*Error](err); ok {
		return ae.Error()
	}
	return "Error: " + err.Error()
}

type param struct {
	name   string
	def    any
	hasDef bool
}

func req(name string) param          { return param{name: name} }
func opt(name string, def any) param { return param{name: name, def: def, hasDef: true} }

// actions returns the action set: each action with its parameters. It is
// built per call so that no mutable table is shared.
func actions() map[string][]param {
	return map[string][]param{
		"noop":              {opt("wait_ms", int64(1000))},
		"send_msg_to_user":  {req("text")},
		"report_infeasible": {req("reason")},
		"scroll":            {req("delta_x"), req("delta_y")},
		"fill":              {req("bid"), req("value")},
		"select_option":     {req("bid"), req("options")},
		"click":             {req("bid"), opt("button", "left"), opt("modifiers", List{})},
		"dblclick":          {req("bid"), opt("button", "left"), opt("modifiers", List{})},
		"hover":             {req("bid")},
		"press":             {req("bid"), req("key_comb")},
		"focus":             {req("bid")},
		"clear":             {req("bid")},
		"drag_and_drop":     {req("from_bid"), req("to_bid")},
		"upload_file":       {req("bid"), req("file")},
		"go_back":           nil,
		"go_forward":        nil,
		"goto":              {req("url")},
		"tab_close":         nil,
		"tab_focus":         {req("index")},
		"new_tab":           nil,
	}
}

// Names lists the actions of the set, sorted: what a driver of the page
// must perform.
func Names() []string {
	set := actions()
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Run parses program and performs its calls in order: each is bound to its
// parameters (defaults filled in) and handed to do. It returns the error
// text of the first call that failed, as BrowserGym's step reports it, or ""
// when all succeeded: a syntax error, an empty program, an unknown action
// (before any call is performed), a call that does not bind, or the error do
// returned (see Text). An error that do returns once ctx is done is returned
// as err instead: then the step itself failed, not an action.
func Run(ctx context.Context, program string, do func(name string, args map[string]any) error) (string, error) {
	calls, err := Parse(program)
	if err != nil {
		return "SyntaxError: " + err.Error(), nil
	}
	if len(calls) == 0 {
		return "ValueError: Received an empty action.", nil
	}
	set := actions()
	for _, c := range calls {
		if _, ok := set[c.Name]; !ok {
			return fmt.Sprintf("NameError: Invalid action type %s.", pyfmt.String(c.Name)), nil
		}
	}
	for _, c := range calls {
		args, err := bindArgs(c, set[c.Name])
		if err == nil {
			err = do(c.Name, args)
		}
		if err != nil {
			if ctx.Err() != nil {
				return "", err
			}
			return Text(err), nil
		}
	}
	return "", nil
}

// bindArgs matches a call's arguments to the parameters as Python does.
func bindArgs(c Call, params []param) (map[string]any, error) {
	if len(c.Args) > len(params) {
		required := 0
		for _, p := range params {
			if !p.hasDef {
				required++
			}
		}
		takes := fmt.Sprintf("%d positional argument%s", len(params), plural(len(params)))
		if required != len(params) {
			takes = fmt.Sprintf("from %d to %d positional arguments", required, len(params))
		}
		were := "were"
		if len(c.Args) == 1 {
			were = "was"
		}
		return nil, Errorf("TypeError", "%s() takes %s but %d %s given", c.Name, takes, len(c.Args), were)
	}
	args := map[string]any{}
	for i, v := range c.Args {
		args[params[i].name] = v
	}
	for _, kw := range c.Kwargs {
		idx := -1
		for i, p := range params {
			if p.name == kw.Name {
				idx = i
			}
		}
		if idx < 0 {
			return nil, Errorf("TypeError", "%s() got an unexpected keyword argument %s", c.Name, pyfmt.String(kw.Name))
		}
		if _, dup := args[kw.Name]; dup {
			return nil, Errorf("TypeError", "%s() got multiple values for argument %s", c.Name, pyfmt.String(kw.Name))
		}
		args[kw.Name] = kw.Value
	}
	var missing []string
	for _, p := range params {
		if _, ok := args[p.name]; ok {
			continue
		}
		if p.hasDef {
			args[p.name] = p.def
		} else {
			missing = append(missing, pyfmt.String(p.name))
		}
	}
	if len(missing) > 0 {
		list := missing[len(missing)-1]
		if len(missing) > 1 {
			list = strings.Join(missing[:len(missing)-1], ", ") + " and " + list
			if len(missing) > 2 {
				list = strings.Join(missing[:len(missing)-1], ", ") + ", and " + missing[len(missing)-1]
			}
		}
		return nil, Errorf("TypeError", "%s() missing %d required positional argument%s: %s", c.Name, len(missing), plural(len(missing)), list)
	}
	return args, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Str is Python's str() of an argument value.
func Str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyfmt.Repr(v)
}

// BidArg returns a bid argument, which must be a string.
func BidArg(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", Errorf("ValueError", "expected a string, got %s", pyfmt.Repr(v))
	}
	return s, nil
}

// StringArg returns the string argument of parameter name.
func StringArg(name string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", Errorf("TypeError", "%s: expected a string, got %s", name, pyfmt.Repr(v))
	}
	return s, nil
}

// NumberArg returns the numeric argument of parameter name; True and False
// count as 1 and 0, as in Python.
func NumberArg(name string, v any) (float64, error) {
	switch n := v.(type) {
	case int64:
		return float64(n), nil
	case float64:
		return n, nil
	case bool:
		if n {
			return 1, nil
		}
		return 0, nil
	}
	return 0, Errorf("TypeError", "%s: expected a number, got %s", name, pyfmt.Repr(v))
}

// StringsArg returns the argument of parameter name, a string or a list or
// tuple of strings, as a list.
func StringsArg(name string, v any) ([]string, error) {
	if s, ok := v.(string); ok {
		return []string{s}, nil
	}
	var items []any
	switch l := v.(type) {
	case List:
		items = l
	case Tuple:
		items = l
	default:
		return nil, Errorf("TypeError", "%s: expected a string or a list of strings, got %s", name, pyfmt.Repr(v))
	}
	out := make([]string, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, Errorf("TypeError", "%s: expected a string or a list of strings, got %s", name, pyfmt.Repr(v))
		}
		out[i] = s
	}
	return out, nil
}

// TypeName is the name of v's Python type, as a TypeError names it.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case string:
		return "str"
	case float64:
		return "float"
	case List:
		return "list"
	case Tuple:
		return "tuple"
	case Dict:
		return "dict"
	default:
		return "object"
	}
}
