package image

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
)

// Builder is the seam between the decision tree and a real image builder.
type Builder interface {
	// Name says which builder this is ("docker", "buildah").
	Name() string
	// Exists reports whether the image ref is in the builder's local store.
	Exists(ctx context.Context, ref string) (bool, error)
	// Build builds the context in req.Dir and tags the result req.Tags[0].
	Build(ctx context.Context, req BuildRequest) error
	// Tag gives the image src another name.
	Tag(ctx context.Context, src, dst string) error
}

// BuildRequest is one build.
type BuildRequest struct {
	Dir       string            // the build context, with its Dockerfile
	Tags      []string          // full references; the first names the result
	Platform  string            // "" for the builder's own
	BuildArgs map[string]string // --build-arg values
	Output    io.Writer         // the builder's output as it comes; nil discards it
}

// errTailLines is how much of a failed build's output its error carries.
const errTailLines = 20

// runTool runs a builder's command, streaming its output to out while
// keeping the last lines for the error if it fails.
func runTool(ctx context.Context, out io.Writer, name string, args ...string) error {
	tail := &tailWriter{max: errTailLines}
	w := io.Writer(tail)
	if out != nil {
		w = io.MultiWriter(out, tail)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout = w
	cmd.Stderr = w
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", name, args[0], ctx.Err())
		}
		last := tail.String()
		if last == "" {
			return fmt.Errorf("%s %s: %w", name, args[0], err)
		}
		return fmt.Errorf("%s %s: %w; last lines:\n%s", name, args[0], err, last)
	}
	return nil
}

// exitCode is the exit status of a command that ran and failed, or -1.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// tailWriter keeps the last max lines written to it.
type tailWriter struct {
	mu    sync.Mutex
	max   int
	lines []string
	part  []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part = append(t.part, p...)
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		t.push(string(t.part[:i]))
		t.part = t.part[i+1:]
	}
	// A line without an end (a progress bar) cannot grow without bound.
	if len(t.part) > 4096 {
		t.part = t.part[len(t.part)-4096:]
	}
	return len(p), nil
}

func (t *tailWriter) push(line string) {
	t.lines = append(t.lines, strings.TrimRight(line, "\r"))
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

// String returns the kept lines, the unfinished one last.
func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.part) > 0 {
		lines = append(lines[:len(lines):len(lines)], string(t.part))
	}
	return strings.Join(lines, "\n")
}

// buildArgFlags spells build args as flags, in a fixed order.
func buildArgFlags(args map[string]string) []string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var flags []string
	for _, k := range keys {
		flags = append(flags, "--build-arg", k+"="+args[k])
	}
	return flags
}
