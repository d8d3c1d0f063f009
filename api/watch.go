package api

import "time"

// Watch operations, as WatchEvent.Op carries them.
const (
	OpCreate = "create"
	OpWrite  = "write"
	OpRemove = "remove"
	OpRename = "rename"
	OpChmod  = "chmod"
	// OpLimit: the directory at Path and what is below it are not watched,
	// because the watch reached the server's cap on watched directories;
	// sent at most once per watch.
	OpLimit = "limit"
)

// WatchEvent is one file-system change under a watched directory: the
// "data:" line of an event of GET /watch.
type WatchEvent struct {
	Path  string    `json:"path"`
	Op    string    `json:"op"`
	IsDir bool      `json:"is_dir"`
	Time  time.Time `json:"time"`
}
