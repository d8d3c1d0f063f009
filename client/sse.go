package client

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
)

// sseEvent is one Server-Sent Event; ID is -1 when the event had none.
// Data is valid only until the callback it was handed to returns.
type sseEvent struct {
	Event string
	ID    int64
	Data  []byte
}

// readSSE reads events from r and hands each to fn until fn returns false
// (then it returns nil), r ends (io.ErrUnexpectedEOF: streams here end only
// by an event the caller recognises) or fails. Comment lines are skipped.
//
// Lines are taken as bytes and the data is gathered in one reused buffer:
// output events are large, and a copy of each line as a string, then of
// the joined data, then of that as bytes to decode, cost more than the
// decoding.
func readSSE(r io.Reader, fn func(sseEvent) (bool, error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	ev := sseEvent{ID: -1}
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if ev.Event == "" && len(data) == 0 {
				continue
			}
			ev.Data = data
			more, err := fn(ev)
			if err != nil || !more {
				return err
			}
			ev = sseEvent{ID: -1}
			data = data[:0]
		case line[0] == ':':
			// comment: keep-alive
		case bytes.HasPrefix(line, []byte("id:")):
			if n, err := strconv.ParseInt(string(bytes.TrimSpace(line[len("id:"):])), 10, 64); err == nil {
				ev.ID = n
			}
		case bytes.HasPrefix(line, []byte("event:")):
			ev.Event = string(bytes.TrimSpace(line[len("event:"):]))
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			v := line[len("data:"):]
			if len(v) > 0 && v[0] == ' ' {
				v = v[1:]
			}
			data = append(data, v...)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}
