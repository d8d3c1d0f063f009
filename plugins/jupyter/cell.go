package jupyter

import (
	"regexp"
	"strings"
	"sync"

	"github.com/actionserver/actionserver/internal/pyfmt"
)

// Cell is one run_ipython action.
type Cell struct {
	Code string
	// Cwd is the shell's current directory: the kernel follows it before
	// the cell runs, and IncludeExtra reports it.
	Cwd string
	// Timeout is the action's timeout in seconds; nil waits as long as the
	// cell runs. On expiry the kernel is interrupted.
	Timeout *float64
	// IncludeExtra appends the working directory and interpreter lines.
	IncludeExtra bool
}

// Result is a cell's observation content.
type Result struct {
	// Content is what the agent reads.
	Content string
	// ImageURLs are the cell's PNG outputs as data: URLs; nil when none.
	ImageURLs []string
}

// Texts agents know from upstream.
const (
	noOutputText = "[Code executed successfully with no output]"
)

// timedOutText is the content of a cell interrupted at its timeout; the
// number is printed as Python prints the float the host sent.
func timedOutText(seconds float64) string {
	return "[Execution timed out (" + pyfmt.Float(seconds) + " seconds).]"
}

// sgr matches the colour codes upstream strips: ESC[n m with up to three
// numbers.
// Compiled on first use: at package initialisation it would cost every
// start of the server, with or without Jupyter.
var sgr = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b\[\d+(;\d+){0,2}m`) })

// output is one piece of a cell's output, in arrival order.
type output struct {
	text  string
	image string // data: URL
}

// content builds the observation of a finished (or timed-out) cell.
func content(c Cell, outs []output, timedOut bool, note, interpreter string) Result {
	var r Result
	var text strings.Builder
	hasText := false
	for _, o := range outs {
		if o.image != "" {
			r.ImageURLs = append(r.ImageURLs, o.image)
			continue
		}
		hasText = true
		text.WriteString(o.text)
	}
	body := text.String()
	switch {
	case timedOut:
		body, r.ImageURLs = timedOutText(*c.Timeout), nil
	case !hasText:
		body = noOutputText
	}
	body = strings.TrimRight(sgr().ReplaceAllString(body, ""), " \t\n\r\v\f")
	if note != "" {
		body = note + "\n" + body
	}
	if c.IncludeExtra {
		body += "\n[Jupyter current working directory: " + c.Cwd + "]"
		body += "\n[Jupyter Python interpreter: " + interpreter + "]"
	}
	r.Content = body
	return r
}
