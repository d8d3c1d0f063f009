package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/executor"
)

// Errors reach the client in one of two envelopes: {"detail": ...} for
// everything, and upstream's validation envelope for bodies of the wrong
// shape. On the native routes both also carry a machine-readable code
// (api.ErrorBody); the OpenHands routes answer exactly as upstream does,
// without one. An executor error's kind picks its status, and the error its
// code, here and only here.

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

// codeOf names an executor error for programs. The sentinels that share
// a kind with others get their own code first.
func codeOf(err error) string {
	switch {
	case errors.Is(err, executor.ErrPathEscapes):
		return api.CodePathEscapes
	case errors.Is(err, executor.ErrPathExists), errors.Is(err, executor.ErrSessionExists):
		return api.CodeExists
	case errors.Is(err, executor.ErrBusy):
		return api.CodeBusy
	}
	switch executor.KindOf(err) {
	case executor.KindInvalid:
		return api.CodeInvalid
	case executor.KindNotFound:
		return api.CodeNotFound
	case executor.KindConflict:
		return api.CodeConflict
	case executor.KindLimit:
		return api.CodeLimit
	case executor.KindTooLarge:
		return api.CodeTooLarge
	case executor.KindUnavailable:
		return api.CodeUnavailable
	case executor.KindNoSpace:
		return api.CodeNoSpace
	case executor.KindPermission:
		return api.CodePermission
	}
	return api.CodeInternal
}

// nativePrefixes are the paths of the native API, whose errors carry a
// code. Everything else is upstream's API and answers as upstream does.
var nativePrefixes = []string{"/sessions/", "/files/", "/watch", claimPath}

// native reports whether the request is addressed to the native API.
func native(c *gin.Context) bool {
	p := c.Request.URL.Path
	if p == "/sessions" {
		return true
	}
	for _, pre := range nativePrefixes {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

// fail answers an executor error with its status, its text and, on the
// native routes, its code.
func fail(c *gin.Context, err error) {
	detail(c, statusOf(err), codeOf(err), err.Error())
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
	detail(c, http.StatusInternalServerError, codeOf(err), upstreamText(err))
}

// detail writes the {"detail": ...} envelope every error uses, with code
// beside it on the native routes.
func detail(c *gin.Context, status int, code, msg string) {
	if !native(c) {
		code = ""
	}
	c.AbortWithStatusJSON(status, api.ErrorBody{Detail: msg, Code: code})
}

// invalidRequest answers a body that does not have the request's shape,
// with the envelope of the upstream server's validation errors.
func invalidRequest(c *gin.Context, err error) {
	body := api.ValidationErrorBody{Detail: "Invalid request parameters", Errors: err.Error()}
	if native(c) {
		body.Code = api.CodeInvalid
	}
	c.AbortWithStatusJSON(http.StatusUnprocessableEntity, body)
}
