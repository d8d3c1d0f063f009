// Package chown names the user and group that the files made for the agent
// are given: the files a write, an edit, an upload or a browser download
// creates are the sandbox user's, not the server's.
package chown

// Owner is the user and group a new file is given, as chown(2) takes them:
// -1 leaves that id as the creating process has it. The zero value is root.
type Owner struct {
	UID, GID int
}

// Keep leaves new files owned by the server process.
var Keep = Owner{UID: -1, GID: -1}

// IsKeep reports whether o leaves both ids as they are.
func (o Owner) IsKeep() bool { return o.UID < 0 && o.GID < 0 }
