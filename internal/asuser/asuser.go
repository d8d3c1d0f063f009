// Package asuser runs file I/O with a sandbox user's filesystem rights.
//
// The server may run as root while the agent's commands run as an
// unprivileged sandbox user. Every file operation the agent asks for by path
// (read, write, edit, upload, download, listing, the file viewer) must then
// reach only what that user could reach: a symlink the agent planted must
// not lead root to /etc/shadow or into a root-only directory.
//
// The mechanism is the kernel's, not hand-written permission logic: Do runs
// its function on a goroutine locked to one OS thread whose filesystem
// credentials (fsuid, fsgid and supplementary groups, all per thread on
// Linux) are the user's. Going from fsuid 0 to another fsuid clears the
// thread's filesystem capabilities (CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_CHOWN
// and the rest), so every path lookup, symlinks included, every open,
// create, rename and chown is checked exactly as for that user, and what
// the thread creates belongs to the user natively. The credentials are
// restored before the thread is released; if that fails the thread is never
// unlocked, and the Go runtime discards it when the goroutine ends. New
// threads are cloned from the runtime's template thread while a thread is
// locked, so they never inherit the switched credentials.
//
// What f must not do: start goroutines that touch the filesystem (they run
// on other threads, with the server's rights), or start processes (execve
// resets the filesystem ids to the effective ids, which are root's).
package asuser

// User is the identity whose filesystem rights Do gives: fsuid UID, fsgid
// GID and the supplementary groups Groups (which should include the user's
// primary group when GID is not it). A nil *User stands for the server's
// own rights: Do then just calls f.
type User struct {
	UID, GID uint32
	Groups   []uint32
}

// ForFiles returns the User whose rights a server running as root uses for
// the files it handles for a sandbox user uid with primary group gid and
// supplementary groups groups, or nil when no switch is needed (the server
// is not root, or uid is the server's own). fileGID is the group new files
// get: fsgid is set to it so that they belong to it natively, and gid joins
// the supplementary groups so that the user's own group rights stay.
func ForFiles(uid, gid, fileGID uint32, groups []uint32) *User {
	if euid() != 0 || uid == 0 {
		return nil
	}
	all := append([]uint32{gid}, groups...)
	return &User{UID: uid, GID: fileGID, Groups: all}
}
