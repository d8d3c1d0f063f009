package shell

import (
	"slices"
	"time"
)

// A session keeps its recent commands, so the native API can read a
// command's output by id after it finished, and the command that runs now
// (Session.last), whose output a policy (OpenHands' run) shows.

// historySize is how many commands a session remembers.
const historySize = 32

// newCommand makes text the session's current command, before it is sent
// to bash.
func (s *Session) newCommand(p *process, text string) *Command {
	heredocs, incomplete := examineInput(text)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	c := &Command{ID: s.nextID, Text: text, Started: time.Now(), out: newRing(s.opts.OutputLimit),
		done: make(chan struct{}), proc: p, mu: &p.mu, heredocs: heredocs, incomplete: incomplete}
	s.last = c
	s.gen++
	s.remember(c)
	return c
}

// remember adds c to the history, forgetting the oldest commands and the
// output of older finished ones beyond OutputLimit in total, so a session
// holds at most twice OutputLimit of output in memory however much its
// commands print: the running command's and its predecessors'. Output that
// moves to a file (spill.go) does not count against that when a budget
// bounds it: the budget then decides when it goes. Called with mu held.
func (s *Session) remember(c *Command) {
	historyBytes := s.opts.OutputLimit
	s.history = append(s.history, c)
	if len(s.history) > historySize {
		// Forgotten: its output (maybe a file) is freed now, not when
		// the collector finds it.
		if old := s.history[0]; old != c {
			old.mu.Lock()
			if isClosed(old.done) {
				old.out.release()
			}
			old.mu.Unlock()
		}
		s.history[0] = nil
		s.history = s.history[1:]
	}
	kept := 0
	for i := len(s.history) - 1; i >= 0; i-- {
		old := s.history[i]
		if old == c {
			continue
		}
		old.mu.Lock()
		if isClosed(old.done) && !(s.opts.Budget != nil && spills(old.out)) {
			if kept+old.out.size > historyBytes {
				old.out.release()
			}
			kept += old.out.size
		}
		old.mu.Unlock()
	}
}

// abandon forgets c, a command that never reached bash (the shell was busy
// with what a person typed, say): prev is the last command again. Left in
// place, c would count as running forever and every later command would
// be refused.
func (s *Session) abandon(p *process, c *Command, prev *Command) {
	p.mu.Lock()
	if !isClosed(c.done) {
		c.meta = unknownMetadata()
		c.finished = time.Now()
		close(c.done)
		c.notify()
	}
	p.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == c {
		s.last = prev
	}
	s.history = slices.DeleteFunc(s.history, func(h *Command) bool { return h == c })
}

// Command returns a remembered command by id, or a piped command that
// still runs (more may run than the history holds).
func (s *Session) Command(id int64) (*Command, bool) {
	s.mu.Lock()
	for _, c := range s.history {
		if c.ID == id {
			s.mu.Unlock()
			return c, true
		}
	}
	s.mu.Unlock()
	return s.pipes.byID(id)
}

// Running returns the command that runs now, if any.
func (s *Session) Running() (*Command, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != nil && !isClosed(s.last.done) {
		return s.last, true
	}
	return nil, false
}
