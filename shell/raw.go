package shell

import (
	"errors"
	"sync"
)

// RawSubscriber receives a session's terminal output unprocessed, escape
// sequences and all, for a person attached with a real terminal.
type RawSubscriber struct {
	// C delivers chunks of output. It is closed when the subscriber is
	// dropped (it fell behind), unsubscribed, or the shell ends.
	C    <-chan []byte
	ch   chan []byte
	once sync.Once
	// Dropped reports, after C is closed, that the subscriber was dropped
	// for falling behind.
	Dropped bool
}

func (r *RawSubscriber) close() { r.once.Do(func() { close(r.ch) }) }

// rawBacklog is how many chunks an attached terminal may fall behind before
// it is dropped; a stalled one must never hold up the shell.
const rawBacklog = 256

// fanOutRaw copies b to every raw subscriber. Called with mu held.
func (p *process) fanOutRaw(b []byte) {
	for sub := range p.raw {
		select {
		case sub.ch <- append([]byte(nil), b...):
		default:
			sub.Dropped = true
			sub.close()
			delete(p.raw, sub)
		}
	}
}

// ErrNoShell is returned when a session has no live shell to attach to.
var ErrNoShell = errors.New("the session's shell is not running")

// AttachRaw subscribes to the terminal's raw output. Call the returned
// function to unsubscribe.
func (s *Session) AttachRaw() (*RawSubscriber, func(), error) {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || !p.alive() {
		return nil, nil, ErrNoShell
	}
	ch := make(chan []byte, rawBacklog)
	sub := &RawSubscriber{C: ch, ch: ch}
	p.mu.Lock()
	if p.raw == nil {
		p.raw = map[*RawSubscriber]struct{}{}
	}
	p.raw[sub] = struct{}{}
	p.mu.Unlock()
	return sub, func() {
		p.mu.Lock()
		delete(p.raw, sub)
		p.mu.Unlock()
		sub.close()
	}, nil
}

// WriteRaw types b into the terminal, as a person at a keyboard would.
func (s *Session) WriteRaw(b []byte) error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || !p.alive() {
		return ErrNoShell
	}
	return p.write(b)
}
