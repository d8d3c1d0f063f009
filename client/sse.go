package client

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// sseEvent is one Server-Sent Event; ID is -1 when the event had none.
type sseEvent struct {
	Event string
	ID    int64
	Data  string
}

// readSSE reads events from r and hands each to fn until fn returns false
// (then it returns nil), r ends (io.ErrUnexpectedEOF: streams here end only
// by an event the caller recognises) or fails. Comment lines are skipped.
func readSSE(r io.Reader, fn func(sseEvent) (bool, error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	ev := sseEvent{ID: -1}
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Event == "" && data.Len() == 0 {
				continue
			}
			ev.Data = data.String()
			more, err := fn(ev)
			if err != nil || !more {
				return err
			}
			ev = sseEvent{ID: -1}
			data.Reset()
		case strings.HasPrefix(line, ":"):
			// comment: keep-alive
		case strings.HasPrefix(line, "id:"):
			if n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "id:")), 10, 64); err == nil {
				ev.ID = n
			}
		case strings.HasPrefix(line, "event:"):
			ev.Event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}
