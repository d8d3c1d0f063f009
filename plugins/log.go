package plugins

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// maxLogLine bounds a buffered partial line of a child's output.
const maxLogLine = 8 << 10

// LineLogger returns a writer that passes a plugin process's output to log
// line by line, as msg with the line as an attribute, at the level level
// picks (nil: debug). Plugins give it their children's stdout and stderr.
func LineLogger(log *slog.Logger, msg string, level func(line string) slog.Level) io.Writer {
	return &lineLogger{log: log, msg: msg, level: level}
}

type lineLogger struct {
	log   *slog.Logger
	msg   string
	level func(string) slog.Level
	mu    sync.Mutex
	buf   []byte
}

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			if len(w.buf) > maxLogLine {
				w.emit(string(w.buf))
				w.buf = w.buf[:0]
			}
			return len(p), nil
		}
		w.emit(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}

func (w *lineLogger) emit(line string) {
	line = strings.TrimRight(line, "\r")
	if line == "" {
		return
	}
	level := slog.LevelDebug
	if w.level != nil {
		level = w.level(line)
	}
	w.log.Log(context.Background(), level, w.msg, "line", line)
}
