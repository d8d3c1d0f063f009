package api

// ErrorBody is the error envelope of the native routes: Detail says what
// went wrong, for people; Code says which error it is, for programs, which
// should switch on it rather than on the status (several errors share a
// status: a session that exists and a session that is busy are both 409).
// The OpenHands routes answer {"detail": ...} alone, as upstream does.
type ErrorBody struct {
	Detail string `json:"detail"`
	Code   string `json:"code,omitempty"`
}

// Error codes of the envelope, with the status each comes with.
const (
	CodeInvalid          = "invalid"                // 400, 422: a malformed request
	CodePathEscapes      = "path_escapes"           // 400: a relative path leads out of the workspace
	CodeUnauthorized     = "unauthorized"           // 403: the API key (or init token) is missing or wrong
	CodeForbidden        = "forbidden"              // 403: the request's Host or Origin is refused
	CodePermission       = "permission_denied"      // 403: the file system refused
	CodeNotFound         = "not_found"              // 404
	CodeMethodNotAllowed = "method_not_allowed"     // 405
	CodeExists           = "exists"                 // 409: the target (a file, a session id) exists
	CodeBusy             = "busy"                   // 409: the session is running another command
	CodeConflict         = "conflict"               // 409: the request does not fit the state otherwise (not running, not empty)
	CodeTooLarge         = "too_large"              // 413
	CodeUnsupportedMedia = "unsupported_media_type" // 415: the body is not declared JSON
	CodeRangeUnsatisfied = "range_not_satisfiable"  // 416
	CodeLimit            = "limit"                  // 429: too many sessions, pipes or watchers
	CodeInternal         = "internal"               // 500
	CodeUnavailable      = "unavailable"            // 503: not ready, not claimed, shutting down, or closed
	CodeNoSpace          = "no_space"               // 507: the disk is full
)

// ValidationErrorBody answers a body that does not have the request's
// shape (422), in upstream's validation envelope: Detail is always
// "Invalid request parameters" and Errors says what is wrong. On the
// native routes Code is CodeInvalid.
type ValidationErrorBody struct {
	Detail string `json:"detail"`
	Errors string `json:"errors"`
	Code   string `json:"code,omitempty"`
}
