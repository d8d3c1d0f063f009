// Package chown names the user and group that the files made for the agent
// are given: the files a write, an edit, an upload or a browser download
// creates are the sandbox user's, not the server's.
package chown

// Owner is the user and group a new file is given. The zero value, Keep,
// leaves new files as the creating process makes them: a component built
// without an owner must never hand its files to root, which a zero uid and
// gid would name. Make one with To.
type Owner struct {
	uid, gid int
	set      bool
}

// Keep leaves new files owned by the server process; it is the zero value.
var Keep = Owner{}

// To returns the owner uid:gid, as chown(2) takes them: -1 leaves that id
// as the creating process has it.
func To(uid, gid int) Owner { return Owner{uid: uid, gid: gid, set: true} }

// IsKeep reports whether o leaves both ids as they are.
func (o Owner) IsKeep() bool { return !o.set || (o.uid < 0 && o.gid < 0) }

// UID is the user id to give, -1 to keep it.
func (o Owner) UID() int {
	if !o.set {
		return -1
	}
	return o.uid
}

// GID is the group id to give, -1 to keep it.
func (o Owner) GID() int {
	if !o.set {
		return -1
	}
	return o.gid
}
