package api

import "time"

// The byte-level file routes (/files/...). A path is absolute, or relative
// to the workspace; a relative path never leads out of the workspace,
// through ".." or a symlink (see the OpenAPI description).

// FileInfo describes one file-system entry (GET /files/stat, and each
// entry of GET /files/list).
type FileInfo struct {
	Name string `json:"name"`
	// Path is the path as the request named it, cleaned.
	Path string `json:"path"`
	// Type is FileTypeFile, FileTypeDir, FileTypeSymlink or FileTypeOther.
	Type string `json:"type"`
	Size int64  `json:"size"`
	// Mode is the permission and set-id bits, in octal ("0644").
	Mode     string    `json:"mode"`
	Modified time.Time `json:"modified"`
	UID      int       `json:"uid"`
	GID      int       `json:"gid"`
	// Target is a symlink's target as stored in the link; absent for
	// anything else.
	Target string `json:"target,omitempty"`
}

// The types of a FileInfo.
const (
	FileTypeFile    = "file"
	FileTypeDir     = "dir"
	FileTypeSymlink = "symlink"
	FileTypeOther   = "other"
)

// FileList answers GET /files/list.
type FileList struct {
	Path    string     `json:"path"`
	Entries []FileInfo `json:"entries"`
}

// MkdirRequest is the body of POST /files/mkdir.
type MkdirRequest struct {
	Path string `json:"path"`
	// Parents creates missing parents and accepts an existing directory.
	Parents bool `json:"parents,omitempty"`
	// Mode in octal; empty means "0755".
	Mode string `json:"mode,omitempty"`
}

// MoveRequest is the body of POST /files/move.
type MoveRequest struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Overwrite replaces an existing To (a directory only if empty).
	Overwrite bool `json:"overwrite,omitempty"`
}

// RemoveRequest is the body of POST /files/remove.
type RemoveRequest struct {
	Path string `json:"path"`
	// Recursive removes a directory and all it holds.
	Recursive bool `json:"recursive,omitempty"`
}

// ChmodRequest is the body of POST /files/chmod.
type ChmodRequest struct {
	Path string `json:"path"`
	// Mode in octal, at most "7777".
	Mode string `json:"mode"`
}

// FileWritten answers PUT /files/content.
type FileWritten struct {
	Path string `json:"path"`
	// Bytes is how many bytes the request wrote.
	Bytes int64 `json:"bytes"`
	// Size is the file's size afterwards.
	Size int64 `json:"size"`
}

// Query parameters and headers of the content routes.
const (
	// HeaderFileMode carries a downloaded file's mode, in octal.
	HeaderFileMode = "X-File-Mode"
	// QueryGzip ("true") asks GET /files/content for a gzip-compressed
	// body (Content-Encoding: gzip, no Range).
	QueryGzip = "gzip"
)
