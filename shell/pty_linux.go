package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair. The master is returned in
// non-blocking mode and registered with Go's poller, so reads can be
// interrupted by Close and writes can take deadlines; the slave is for the
// child and must be closed by the caller once the child has started.
func openPTY() (master, slave *os.File, err error) {
	m, s, err := pty.Open()
	if errors.Is(err, syscall.ENOSPC) {
		// The kernel's words, "no space left on device", would send a
		// reader looking for a full disk.
		return nil, nil, fmt.Errorf("open pty: %w (%w)", ErrNoPTY, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	// pty.Open leaves the master blocking; a non-blocking duplicate is what
	// os.NewFile can register with the poller.
	fd, err := unix.Dup(int(m.Fd()))
	m.Close()
	if err != nil {
		s.Close()
		return nil, nil, fmt.Errorf("dup pty master: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		s.Close()
		return nil, nil, fmt.Errorf("pty master non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), s, nil
}

// control runs f with the master's descriptor without switching it back to
// blocking mode (which os.File.Fd would do).
func control(master *os.File, f func(fd int) error) error {
	rc, err := master.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// setWinsize sets the terminal size. On Linux, size and mode ioctls on a
// pty master act on its slave.
func setWinsize(master *os.File, rows, cols uint16) error {
	return control(master, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	})
}

// resetTermios puts the terminal back into the cooked mode commands expect:
// canonical input with echo and signals, CR/LF translation, UTF-8 erase, and
// no XON/XOFF (a stray Ctrl-S must not freeze the session). A program that
// crashed in raw mode, or ran `stty -echo`, would otherwise leave the
// session unusable. It runs before every command, so when the mode is
// already right it only reads it: setting it costs ten times as much.
func resetTermios(master *os.File) error {
	return control(master, func(fd int) error {
		t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			return err
		}
		was := *t
		t.Iflag = unix.ICRNL | unix.IUTF8
		t.Oflag = unix.OPOST | unix.ONLCR
		t.Cflag = t.Cflag&^(unix.CSIZE|unix.PARENB) | unix.CS8 | unix.CREAD
		t.Lflag = unix.ISIG | unix.ICANON | unix.ECHO | unix.ECHOE | unix.ECHOK |
			unix.ECHOCTL | unix.ECHOKE | unix.IEXTEN
		t.Cc[unix.VINTR] = 0x03
		t.Cc[unix.VQUIT] = 0x1c
		t.Cc[unix.VERASE] = 0x7f
		t.Cc[unix.VKILL] = 0x15
		t.Cc[unix.VEOF] = 0x04
		t.Cc[unix.VSUSP] = 0x1a
		t.Cc[unix.VMIN] = 1
		t.Cc[unix.VTIME] = 0
		if *t == was {
			return nil
		}
		return unix.IoctlSetTermios(fd, unix.TCSETS, t)
	})
}

// foregroundPgrp returns the terminal's foreground process group.
func foregroundPgrp(master *os.File) (int, error) {
	var pgrp int
	err := control(master, func(fd int) error {
		var err error
		pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	return pgrp, err
}

// sessionMembers lists the processes whose session id is sid: the shell
// that leads it and everything it started, wherever they moved in the
// process tree, except what called setsid itself.
func sessionMembers(sid int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var pids []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		if s, ok := statField(stat, 6); ok && s == sid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// statField returns field n (1-based, as in proc(5)) of /proc/<pid>/stat as
// an integer. The command name may hold spaces and parentheses, so fields
// are counted from the last ')'.
func statField(stat []byte, n int) (int, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || n < 3 {
		return 0, false
	}
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < n-2 {
		return 0, false
	}
	v, err := strconv.Atoi(string(fields[n-3]))
	return v, err == nil
}

// killSession ends every process of the terminal session led by sid: a
// polite signal first, then SIGKILL for whatever is left when ctx is done.
func killSession(ctx context.Context, sid int) {
	pids := sessionMembers(sid)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGHUP)
		_ = syscall.Kill(pid, syscall.SIGCONT)
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for len(pids) > 0 && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			pids = sessionMembers(sid)
		}
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// signalForeground sends sig to the terminal's foreground process group,
// unless that group is the shell's own (nothing is running).
func signalForeground(master *os.File, shellPID int, sig syscall.Signal) error {
	pgrp, err := foregroundPgrp(master)
	if err != nil {
		return fmt.Errorf("foreground process group: %w", err)
	}
	if pgrp <= 0 || pgrp == shellPID {
		return errNothingRunning
	}
	if err := syscall.Kill(-pgrp, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal process group %d: %w", pgrp, err)
	}
	return nil
}

var errNothingRunning = errors.New("no command is running in the foreground")
