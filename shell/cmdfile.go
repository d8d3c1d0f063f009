package shell

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

// cmdFile is the file bash reads each command from (see rc.go). It stays
// open across commands: each command overwrites it in place and cuts it to
// length. Opening it with O_TRUNC and closing it per command cost about
// 0.1 ms, most of the server's share of a short command's round trip: on
// ext4 a file truncated to zero and rewritten is flushed when it is closed.
type cmdFile struct {
	path     string
	dir      string // re-created if something removed it
	uid, gid int    // owner of a re-created dir; -1: the server's user

	mu     sync.Mutex // a session may close while a command starts
	f      *os.File
	closed bool
}

// write makes text the file's whole content.
func (c *cmdFile) write(text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	size := int64(-1) // the file's length before this write; -1: unknown
	if c.f != nil {
		// Agents do clean /tmp: a file unlinked under us is no longer
		// the one bash opens by path.
		fi, err := c.f.Stat()
		if err != nil {
			c.f.Close()
			c.f = nil
		} else if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink == 0 {
			c.f.Close()
			c.f = nil
		} else {
			size = fi.Size()
		}
	}
	if c.f == nil {
		if err := c.open(); err != nil {
			return err
		}
	}
	if _, err := c.f.WriteAt([]byte(text), 0); err != nil {
		return fmt.Errorf("write command file: %w", err)
	}
	// Cut off what is left of a longer command before it. A truncate
	// costs more than the write, so it is skipped when nothing is left
	// over: the same command again, or a longer one.
	if size < 0 || size > int64(len(text)) {
		if err := c.f.Truncate(int64(len(text))); err != nil {
			return fmt.Errorf("write command file: %w", err)
		}
	}
	return nil
}

func (c *cmdFile) open() error {
	if _, err := os.Stat(c.dir); err != nil {
		if err := os.MkdirAll(c.dir, 0o700); err != nil {
			return fmt.Errorf("re-create session directory: %w", err)
		}
		if c.uid >= 0 {
			if err := os.Chown(c.dir, c.uid, c.gid); err != nil {
				return fmt.Errorf("session directory owner: %w", err)
			}
		}
	}
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open command file: %w", err)
	}
	c.f = f
	return nil
}

// close releases the open file.
func (c *cmdFile) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.f != nil {
		c.f.Close()
		c.f = nil
	}
}
