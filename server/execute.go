package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"

	"github.com/actionserver/actionserver/event"
)

const actionTypeKey = "action_type"

// executeAction runs one action and returns its observation.
func (s *Server) executeAction(c *gin.Context) {
	e := s.executor(c)
	if e == nil {
		return
	}
	body, ok := s.readBody(c)
	if !ok {
		return
	}
	raw, err := actionField(body)
	if err != nil {
		invalidRequest(c, errors.New(describeJSON(err)))
		return
	}
	action, err := event.DecodeAction(raw)
	if err != nil {
		// Upstream answers every action it cannot run with this 500,
		// and hosts key their error handling on it.
		detail(c, http.StatusInternalServerError, api.CodeInternal, "Internal server error: "+describeJSON(err))
		return
	}
	c.Set(actionTypeKey, action.Type())

	obs, err := e.Execute(c.Request.Context(), action)
	if err != nil {
		if c.Request.Context().Err() != nil {
			// The client is gone; there is nobody to answer.
			c.Abort()
			return
		}
		detail(c, http.StatusInternalServerError, api.CodeInternal, "Internal server error: "+err.Error())
		return
	}
	out, err := event.EncodeObservation(obs)
	if err != nil {
		detail(c, http.StatusInternalServerError, api.CodeInternal, "Internal server error: "+err.Error())
		return
	}
	c.Data(http.StatusOK, "application/json", out)
}

// readBody reads a request body bounded by MaxBodyBytes, answering the
// client itself when it cannot.
func (s *Server) readBody(c *gin.Context) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			detail(c, http.StatusRequestEntityTooLarge, api.CodeTooLarge, fmt.Sprintf("Request body exceeds %d bytes", tooBig.Limit))
			return nil, false
		}
		detail(c, http.StatusBadRequest, api.CodeInvalid, "Could not read request body: "+err.Error())
		return nil, false
	}
	return body, true
}

// decodeStrict decodes one JSON value, refusing unknown fields, so a typo
// in a native API request is reported rather than ignored.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// The Go type it is decoded into is no business of the client's.
		return errors.New(describeJSON(err))
	}
	if dec.More() {
		return errors.New("body holds more than one JSON value")
	}
	return nil
}

// actionField extracts the "action" object of an /execute_action body.
func actionField(body []byte) ([]byte, error) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("body is not a JSON object: %w", err)
	}
	raw, ok := req["action"]
	if !ok {
		return nil, errors.New(`field "action" is required`)
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, errors.New(`field "action" must be an object`)
	}
	return raw, nil
}
