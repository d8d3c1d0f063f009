package api

// Names on the wire that are not a body's field: headers, the default
// session, and the small bodies several routes answer with. The server
// writes them and the client reads them from here, so the two cannot
// disagree.

// HeaderAPIKey carries the session API key on every request (upstream's
// name; the MCP routes accept more, see the server).
const HeaderAPIKey = "X-Session-API-Key"

// DefaultSession is the id of the session that run actions use. It exists
// from the start and cannot be deleted.
const DefaultSession = "default"

// Headers of an output read with format=raw (GET
// /sessions/{id}/commands/{cid}/output?format=raw): the body is the
// output's bytes, and each header mirrors a field of OutputChunk.
const (
	QueryFormat    = "format"
	FormatRaw      = "raw"
	HeaderOffset   = "X-Output-Offset"
	HeaderNext     = "X-Output-Next-Offset"
	HeaderLost     = "X-Output-Lost"
	HeaderDone     = "X-Output-Done"      // "true" or "false"
	HeaderExitCode = "X-Output-Exit-Code" // absent until the command is done
	HeaderTail     = "X-Output-Tail"      // a Go-quoted ASCII string; absent when empty
)

// OK answers a request that has nothing else to say: input, signal,
// resize, and the file-entry operations.
type OK struct {
	OK bool `json:"ok"`
}

// SessionDeleted answers DELETE /sessions/{id}.
type SessionDeleted struct {
	Deleted bool   `json:"deleted"`
	ID      string `json:"id"`
}

// Status answers the probes (/alive, /livez, /readyz), and /server_info
// before the server is ready: "ok", "starting", "draining" or
// "not initialized".
type Status struct {
	Status string `json:"status"`
}
