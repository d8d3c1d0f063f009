package server

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/executor"
)

// Errors reach the client in one of two envelopes: {"detail": ...} for
// everything, and upstream's validation envelope for bodies of the wrong
// shape. An executor error's kind picks its status here, and only here.

// statusOf returns the HTTP status that answers an executor error.
func statusOf(err error) int {
	switch executor.KindOf(err) {
	case executor.KindInvalid:
		return http.StatusBadRequest
	case executor.KindNotFound:
		return http.StatusNotFound
	case executor.KindConflict:
		return http.StatusConflict
	case executor.KindLimit:
		return http.StatusTooManyRequests
	case executor.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case executor.KindUnavailable:
		// Not the server's fault, and it passes when a session ends.
		return http.StatusServiceUnavailable
	case executor.KindNoSpace:
		return http.StatusInsufficientStorage
	case executor.KindPermission:
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

// fail answers an executor error with its status and its text.
func fail(c *gin.Context, err error) {
	detail(c, statusOf(err), err.Error())
}

// upstreamText words an error the way upstream's server does when it
// reports a refused request inside a 500, which the host shows as is:
// "<status>: <message>".
func upstreamText(err error) string {
	if executor.KindOf(err) == executor.KindInternal {
		return err.Error()
	}
	return fmt.Sprintf("%d: %s", statusOf(err), err)
}

// failAsUpstream answers a transfer's error as upstream's server does,
// a 500 whose detail is upstreamText, except an archive over the size
// limits, which answers 413 (upstream has no limit).
func failAsUpstream(c *gin.Context, err error) {
	if executor.KindOf(err) == executor.KindTooLarge {
		fail(c, err)
		return
	}
	detail(c, http.StatusInternalServerError, upstreamText(err))
}

// detail writes the {"detail": ...} envelope every error uses.
func detail(c *gin.Context, status int, msg string) {
	c.AbortWithStatusJSON(status, gin.H{"detail": msg})
}

// invalidRequest answers a body that does not have the request's shape,
// with the envelope of the upstream server's validation errors.
func invalidRequest(c *gin.Context, err error) {
	c.AbortWithStatusJSON(http.StatusUnprocessableEntity, gin.H{
		"detail": "Invalid request parameters",
		"errors": err.Error(),
	})
}
