package mcp

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

const (
	// maxStderrLine bounds one logged line of a server's stderr.
	maxStderrLine = 1 << 10
	// maxStderrLines bounds the lines logged per run, so a chatty server
	// cannot flood the server log.
	maxStderrLines = 500
	// stderrTailLines are kept to explain a failed start.
	stderrTailLines = 5
)

// stderrLog passes a server's stderr to the log line by line, bounded, and
// keeps the last few lines for error messages.
type stderrLog struct {
	log *slog.Logger

	mu      sync.Mutex
	partial []byte
	logged  int
	last    []string
}

func newStderrLog(log *slog.Logger) *stderrLog { return &stderrLog{log: log} }

// reset starts a new run's count and tail.
func (w *stderrLog) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial, w.logged, w.last = nil, 0, nil
}

func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			if len(w.partial) > maxStderrLine {
				w.line(string(w.partial[:maxStderrLine]))
				w.partial = w.partial[:0]
			}
			return len(p), nil
		}
		w.line(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
}

func (w *stderrLog) line(l string) {
	l = strings.TrimRight(l, "\r")
	if len(l) > maxStderrLine {
		l = l[:maxStderrLine]
	}
	if strings.TrimSpace(l) == "" {
		return
	}
	w.last = append(w.last, l)
	if len(w.last) > stderrTailLines {
		w.last = w.last[1:]
	}
	switch {
	case w.logged < maxStderrLines:
		w.log.Info("MCP server stderr", "line", l)
	case w.logged == maxStderrLines:
		w.log.Warn("MCP server stderr: further lines of this run are not logged")
	}
	w.logged++
}

// tail returns the last lines as a suffix for an error message, or "".
func (w *stderrLog) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.last) == 0 {
		return ""
	}
	return " (stderr: " + strings.Join(w.last, " | ") + ")"
}
