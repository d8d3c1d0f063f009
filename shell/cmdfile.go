package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// cmdFile is the file bash reads each command from (see rc.go). It stays
// open across commands: each command overwrites it in place and cuts it to
// length. Opening it with O_TRUNC and closing it per command cost about
// 0.1 ms, most of the server's share of a short command's round trip: on
// ext4 a file truncated to zero and rewritten is flushed when it is closed.
//
// The file and its directory belong to the server's user, never to the
// shell's: a server running as root re-opens the file by path, and a
// directory the shell's user could write would let it plant a link there
// that root then writes through. The shell's user reads the file through
// the directory's group (see sessionDirMode).
type cmdFile struct {
	path  string
	dir   string // re-created if something removed it
	gid   int    // group of the directory; -1: the server's own user runs bash
	nonce string // the shell's, written in each header line

	mu     sync.Mutex // a session may close while a command starts
	f      *os.File
	seq    uint64 // the sequence number of the last command written
	closed bool

	// stale is set when bash reported that it could not read a command
	// (see staleMessage): the next write replaces the file and mends the
	// directory, whatever the agent did to them.
	stale atomic.Bool
}

// sessionDirMode is the mode of a session's directory: private to the
// server, and readable by the group of the shell's user when that is
// another user.
func sessionDirMode(gid int) os.FileMode {
	if gid < 0 {
		return 0o700
	}
	return 0o750
}

// write makes text the command bash reads next, after a header line: the
// shell's nonce and a new sequence number (see rcScript).
func (c *cmdFile) write(text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	size := int64(-1) // the file's length before this write; -1: unknown
	if c.stale.Swap(false) && c.f != nil {
		c.f.Close()
		c.f = nil
	}
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
	c.seq++
	buf := make([]byte, 0, len(c.nonce)+seqDigits+1+len(text))
	buf = append(buf, c.nonce...)
	seq := strconv.AppendUint(nil, c.seq, 10)
	for range seqDigits - len(seq) {
		buf = append(buf, '0')
	}
	buf = append(buf, seq...)
	buf = append(buf, '\n')
	buf = append(buf, text...)
	if _, err := c.f.WriteAt(buf, 0); err != nil {
		return fmt.Errorf("write command file: %w", err)
	}
	// Cut off what is left of a longer command before it. A truncate
	// costs more than the write, so it is skipped when nothing is left
	// over: the same command again, or a longer one.
	if size < 0 || size > int64(len(buf)) {
		if err := c.f.Truncate(int64(len(buf))); err != nil {
			return fmt.Errorf("write command file: %w", err)
		}
	}
	return nil
}

// open creates the file afresh: whatever is at its path (a file the
// shell's user made unreadable, a directory or a link put there) is
// removed, and the new file is created exclusively, never through a link.
func (c *cmdFile) open() error {
	if err := c.ensureDir(); err != nil {
		return err
	}
	if err := os.RemoveAll(c.path); err != nil {
		return fmt.Errorf("replace command file: %w", err)
	}
	fd, err := unix.Open(c.path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("open command file %s: %w", c.path, err)
	}
	c.f = os.NewFile(uintptr(fd), c.path)
	return nil
}

// ensureDir makes sure the session directory is there, is a directory
// (not a link) and is the server's own with its mode and group, creating
// it again if something removed it. It is made with Mkdir, which never
// follows a link at its path, in a parent that is /tmp or like it: sticky,
// so no one else can rename or remove it once it is there.
func (c *cmdFile) ensureDir() error {
	mode := sessionDirMode(c.gid)
	fi, err := os.Lstat(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(c.dir, 0o700); err != nil {
			return fmt.Errorf("re-create session directory: %w", err)
		}
		fi, err = os.Lstat(c.dir)
	}
	if err != nil {
		return fmt.Errorf("session directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("session directory %s was replaced by something the server does not own", c.dir)
	}
	if c.gid >= 0 && int(st.Gid) != c.gid {
		if err := os.Lchown(c.dir, -1, c.gid); err != nil {
			return fmt.Errorf("session directory group: %w", err)
		}
	}
	if fi.Mode().Perm() != mode {
		if err := os.Chmod(c.dir, mode); err != nil {
			return fmt.Errorf("session directory mode: %w", err)
		}
	}
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
