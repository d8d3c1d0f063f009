package jupyter

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
)

// maxLogLine bounds a buffered partial line of the server's output.
const maxLogLine = 8 << 10

// logWriter passes the Jupyter Server's output to the logger line by
// line: its errors as warnings, the rest (request logs) at debug level.
type logWriter struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
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

func (w *logWriter) emit(line string) {
	line = strings.TrimRight(line, "\r")
	if line == "" {
		return
	}
	level := slog.LevelDebug
	if strings.HasPrefix(line, "[E ") || strings.HasPrefix(line, "[C ") || strings.Contains(line, "Traceback") {
		level = slog.LevelWarn
	}
	w.log.Log(context.Background(), level, "jupyter server", "line", line)
}
