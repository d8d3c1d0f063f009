package browser

import (
	"fmt"
	"strings"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// The functions of BrowserGym's default action set (subsets chat, infeas,
// bid, nav and tab, plus noop), with Python's argument binding so that a
// wrong call fails with the TypeError an agent expects.

// actionError is an error of an action, shown to the agent as
// "<kind>: <msg>" like a Python exception.
type actionError struct {
	kind string
	msg  string
}

func (e *actionError) Error() string { return e.kind + ": " + e.msg }

func errorf(kind, format string, args ...any) error {
	return &actionError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

type param struct {
	name   string
	def    any
	hasDef bool
}

func req(name string) param          { return param{name: name} }
func opt(name string, def any) param { return param{name: name, def: def, hasDef: true} }

type actionFunc func(s *step, args map[string]any) error

type actionSpec struct {
	params []param
	run    actionFunc
}

// actionSpecs returns the action set. It is built per call so that no
// mutable table is shared.
func actionSpecs() map[string]actionSpec {
	return map[string]actionSpec{
		"noop":              {[]param{opt("wait_ms", int64(1000))}, (*step).noop},
		"send_msg_to_user":  {[]param{req("text")}, (*step).sendMsg},
		"report_infeasible": {[]param{req("reason")}, (*step).reportInfeasible},
		"scroll":            {[]param{req("delta_x"), req("delta_y")}, (*step).scroll},
		"fill":              {[]param{req("bid"), req("value")}, (*step).fill},
		"select_option":     {[]param{req("bid"), req("options")}, (*step).selectOption},
		"click":             {[]param{req("bid"), opt("button", "left"), opt("modifiers", List{})}, (*step).click},
		"dblclick":          {[]param{req("bid"), opt("button", "left"), opt("modifiers", List{})}, (*step).dblclick},
		"hover":             {[]param{req("bid")}, (*step).hover},
		"press":             {[]param{req("bid"), req("key_comb")}, (*step).press},
		"focus":             {[]param{req("bid")}, (*step).focus},
		"clear":             {[]param{req("bid")}, (*step).clear},
		"drag_and_drop":     {[]param{req("from_bid"), req("to_bid")}, (*step).dragAndDrop},
		"upload_file":       {[]param{req("bid"), req("file")}, (*step).uploadFile},
		"go_back":           {nil, (*step).goBack},
		"go_forward":        {nil, (*step).goForward},
		"goto":              {[]param{req("url")}, (*step).gotoAction},
		"tab_close":         {nil, (*step).tabClose},
		"tab_focus":         {[]param{req("index")}, (*step).tabFocus},
		"new_tab":           {nil, (*step).newTab},
	}
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
		return nil, errorf("TypeError", "%s() takes %s but %d %s given", c.Name, takes, len(c.Args), were)
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
			return nil, errorf("TypeError", "%s() got an unexpected keyword argument %s", c.Name, pyfmt.String(kw.Name))
		}
		if _, dup := args[kw.Name]; dup {
			return nil, errorf("TypeError", "%s() got multiple values for argument %s", c.Name, pyfmt.String(kw.Name))
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
		return nil, errorf("TypeError", "%s() missing %d required positional argument%s: %s", c.Name, len(missing), plural(len(missing)), list)
	}
	return args, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// pyStr is Python's str() of an argument value.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyfmt.Repr(v)
}

// bidArg returns a bid argument, which must be a string.
func bidArg(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", errorf("ValueError", "expected a string, got %s", pyfmt.Repr(v))
	}
	return s, nil
}

// stringArg returns a string argument.
func stringArg(name string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", errorf("TypeError", "%s: expected a string, got %s", name, pyfmt.Repr(v))
	}
	return s, nil
}

// numberArg returns a numeric argument.
func numberArg(name string, v any) (float64, error) {
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
	return 0, errorf("TypeError", "%s: expected a number, got %s", name, pyfmt.Repr(v))
}

// stringsArg returns a string or a list of strings as a list.
func stringsArg(name string, v any) ([]string, error) {
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
		return nil, errorf("TypeError", "%s: expected a string or a list of strings, got %s", name, pyfmt.Repr(v))
	}
	out := make([]string, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, errorf("TypeError", "%s: expected a string or a list of strings, got %s", name, pyfmt.Repr(v))
		}
		out[i] = s
	}
	return out, nil
}
