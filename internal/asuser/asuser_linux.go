package asuser

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

// errGoexit is what Do returns when f ended its goroutine instead of
// returning.
var errGoexit = errors.New("asuser: the function ended its goroutine (runtime.Goexit)")

// maxGroups bounds the supplementary groups saved and restored; Linux's
// NGROUPS_MAX is 65536, but a server process has a handful.
const maxGroups = 256

// Do calls f with u's filesystem rights and returns its error. With a nil u
// it calls f directly. f runs on a separate goroutine locked to its thread;
// a panic in f is re-raised in the caller after the rights are restored.
// The thread's groups and ids are switched with raw per-thread system calls
// (setgroups(2) through syscall.Setgroups would change every thread).
func (u *User) Do(f func() error) error {
	if u == nil {
		return f()
	}
	type result struct {
		err   error
		panic any
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		restore, err := u.switchThread()
		if err != nil {
			if restore == nil {
				runtime.UnlockOSThread()
			}
			// Otherwise the thread may hold part of u's rights: it stays
			// locked, and dies with this goroutine.
			done <- result{err: err}
			return
		}
		// Deferred, so that it also runs when f ends its goroutine
		// (runtime.Goexit, as t.FailNow does): the caller then gets
		// errGoexit instead of waiting forever.
		r := result{err: errGoexit}
		defer func() {
			if err := restore(); err != nil {
				// Locked for good: the runtime ends the thread with the
				// goroutine, so no other code ever runs with u's rights.
				if r.err == nil {
					r.err = err
				}
				done <- r
				return
			}
			runtime.UnlockOSThread()
			done <- r
		}()
		defer func() { r.panic = recover() }()
		r.err = f()
	}()
	r := <-done
	if r.panic != nil {
		panic(r.panic)
	}
	return r.err
}

// switchThread gives the current (locked) thread u's filesystem rights and
// returns what gives the old ones back. A nil restore with an error means
// nothing was changed.
func (u *User) switchThread() (restore func() error, err error) {
	oldGroups, err := getgroups()
	if err != nil {
		return nil, err
	}
	oldGID := setfsid(syscall.SYS_SETFSGID, ^uint32(0))
	oldUID := setfsid(syscall.SYS_SETFSUID, ^uint32(0))
	restore = func() error {
		setfsid(syscall.SYS_SETFSUID, oldUID)
		if got := setfsid(syscall.SYS_SETFSUID, ^uint32(0)); got != oldUID {
			return fmt.Errorf("restore fsuid %d: still %d", oldUID, got)
		}
		setfsid(syscall.SYS_SETFSGID, oldGID)
		if got := setfsid(syscall.SYS_SETFSGID, ^uint32(0)); got != oldGID {
			return fmt.Errorf("restore fsgid %d: still %d", oldGID, got)
		}
		if err := setgroups(oldGroups); err != nil {
			return fmt.Errorf("restore groups: %w", err)
		}
		return nil
	}
	// Groups and fsgid first: once the fsuid is not 0 the thread has lost
	// the capabilities that changing them needs.
	if err := setgroups(u.Groups); err != nil {
		return nil, fmt.Errorf("set groups of uid %d: %w", u.UID, err)
	}
	setfsid(syscall.SYS_SETFSGID, u.GID)
	if got := setfsid(syscall.SYS_SETFSGID, ^uint32(0)); got != u.GID {
		return restore, fmt.Errorf("set fsgid %d: got %d (is the server root?)", u.GID, got)
	}
	setfsid(syscall.SYS_SETFSUID, u.UID)
	if got := setfsid(syscall.SYS_SETFSUID, ^uint32(0)); got != u.UID {
		return restore, fmt.Errorf("set fsuid %d: got %d (is the server root?)", u.UID, got)
	}
	return restore, nil
}

// setfsid calls setfsuid(2) or setfsgid(2), which return the previous id
// and report no error; an id of -1 changes nothing and reads the current
// one.
func setfsid(trap uintptr, id uint32) uint32 {
	r, _, _ := syscall.RawSyscall(trap, uintptr(id), 0, 0)
	return uint32(r)
}

// getgroups reads the current thread's supplementary groups.
func getgroups() ([]uint32, error) {
	buf := make([]uint32, maxGroups)
	n, _, errno := syscall.RawSyscall(syscall.SYS_GETGROUPS, uintptr(len(buf)), uintptr(unsafe.Pointer(&buf[0])), 0)
	if errno != 0 {
		return nil, fmt.Errorf("getgroups: %w", errno)
	}
	return buf[:n], nil
}

// setgroups sets the current thread's supplementary groups only.
func setgroups(groups []uint32) error {
	var p unsafe.Pointer
	if len(groups) > 0 {
		p = unsafe.Pointer(&groups[0])
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_SETGROUPS, uintptr(len(groups)), uintptr(p), 0)
	if errno != 0 {
		return errno
	}
	return nil
}

func euid() int { return syscall.Geteuid() }
