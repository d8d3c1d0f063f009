package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/executor"
)

func TestStatusOf_EachKindItsStatus(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{executor.ErrBadSessionID, http.StatusBadRequest},
		{executor.ErrSessionNotFound, http.StatusNotFound},
		{executor.ErrBusy, http.StatusConflict},
		{executor.ErrTooManySessions, http.StatusTooManyRequests},
		{executor.ErrNoPTY, http.StatusServiceUnavailable},
		{fmt.Errorf("wrapped: %w", executor.ErrNoPTY), http.StatusServiceUnavailable},
		{executor.ErrZipTooLarge, http.StatusRequestEntityTooLarge},
		{executor.ErrBadPath, http.StatusBadRequest},
		{errors.New("a fault"), http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			assert.Equal(t, tt.want, statusOf(tt.err))
		})
	}
}

func TestUpstreamText_RefusalsCarryTheirStatus(t *testing.T) {
	assert.Equal(t, "404: File not found", upstreamText(executor.ErrFileNotFound))
	assert.Equal(t, "disk full", upstreamText(errors.New("disk full")))
}

// TestSessionRoutes_Refusals pins the status and body of each refusal of
// the sessions API: the wire the clients read.
func TestSessionRoutes_Refusals(t *testing.T) {
	_, url := newTestServer(t, true, nil)
	tests := []struct {
		method, path, body string
		status             int
		answer             string
	}{
		{"POST", "/sessions", `{"id": "a b"}`, 400,
			`{"detail":"a session id is 1 to 64 letters, digits, '.', '_' or '-', and not '.' or '..'"}`},
		{"POST", "/sessions", `{"id": "default"}`, 409, `{"detail":"a session with this id exists"}`},
		{"POST", "/sessions", `{"name": "x"}`, 422,
			`{"detail":"Invalid request parameters","errors":"unknown field \"name\""}`},
		{"POST", "/sessions", `{"id": 7}`, 422,
			`{"detail":"Invalid request parameters","errors":"field \"id\" must be a string, not number"}`},
		{"POST", "/sessions", `{"cwd": "/nonexistent-dir"}`, 400, `{"detail":"cwd \"/nonexistent-dir\": no such directory"}`},
		{"POST", "/sessions", `{"cwd": "/etc/hostname"}`, 400, `{"detail":"cwd \"/etc/hostname\" is not a directory"}`},
		{"POST", "/sessions", `{"cwd": "/tmp\u0000x"}`, 400, `{"detail":"cwd must not contain NUL bytes"}`},
		{"POST", "/sessions", `{"env": {"A=B": "c"}}`, 400, `{"detail":"env: \"A=B\" is not a variable name (empty, or holds '=' or NUL)"}`},
		{"POST", "/sessions", `{"env": {"A": "c\u0000"}}`, 400, `{"detail":"env: the value of A holds a NUL byte"}`},
		{"POST", "/sessions/default/commands", `{"command": "true", "pipe": true, "cwd": "/nonexistent-dir"}`, 400,
			`{"detail":"cwd \"/nonexistent-dir\": no such directory"}`},
		{"POST", "/sessions/default/commands", `{"command": "true", "pipe": true, "env": {"": "x"}}`, 400,
			`{"detail":"env: \"\" is not a variable name (empty, or holds '=' or NUL)"}`},
		{"POST", "/sessions", `{"id": "."}`, 400,
			`{"detail":"a session id is 1 to 64 letters, digits, '.', '_' or '-', and not '.' or '..'"}`},
		{"POST", "/sessions", `{"id": ".."}`, 400,
			`{"detail":"a session id is 1 to 64 letters, digits, '.', '_' or '-', and not '.' or '..'"}`},
		{"GET", "/sessions/nope", "", 404, `{"detail":"session nope not found"}`},
		{"DELETE", "/sessions/nope", "", 404, `{"detail":"session nope not found"}`},
		{"DELETE", "/sessions/default", "", 400,
			`{"detail":"the default session serves run actions and cannot be deleted"}`},
		{"POST", "/sessions/default/commands", `{"command": " "}`, 400, `{"detail":"command must not be empty"}`},
		{"GET", "/sessions/default/commands/x", "", 400, `{"detail":"command id must be an integer"}`},
		{"GET", "/sessions/default/commands/007/output", "", 404,
			`{"detail":"command 007 not found in session default"}`},
		{"POST", "/sessions/default/input", `{}`, 400,
			`{"detail":"send either \"text\" (with optional \"enter\") or \"key\""}`},
		{"POST", "/sessions/default/input", `{"text": "x"}`, 409, `{"detail":"no command is running in this session"}`},
		{"POST", "/sessions/default/input", `{"key": "C-nope"}`, 400, `{"detail":"unknown key name"}`},
		{"POST", "/sessions/default/signal", `{"signal": "hup"}`, 400,
			`{"detail":"signal must be SIGINT, SIGTERM or SIGKILL"}`},
		{"POST", "/sessions/default/signal", `{"signal": "int"}`, 409, `{"detail":"no command is running in this session"}`},
		{"POST", "/sessions/default/resize", `{"rows": 0, "cols": 80}`, 400, `{"detail":"rows and cols must be positive"}`},
		{"POST", "/sessions/default/resize", `{"rows": 70000}`, 422,
			`{"detail":"Invalid request parameters","errors":"field \"rows\" must be an integer from 0 to 65535, not 70000"}`},
		{"POST", "/list_files", `{"path": 5}`, 400,
			`{"detail":"the body must be a JSON object with an optional string \"path\": field \"path\" must be a string, not number"}`},
		{"POST", "/list_files", `[]`, 400,
			`{"detail":"the body must be a JSON object with an optional string \"path\": expected an object, not array"}`},
		{"GET", "/watch?path=/nonexistent-dir", "", 404,
			`{"detail":"watch /nonexistent-dir: stat /nonexistent-dir: no such file or directory"}`},
		{"GET", "/download_files?path=relative", "", 500, `{"detail":"400: Path must be an absolute path"}`},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path+" "+tt.body, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, url+tt.path, strings.NewReader(tt.body))
			require.NoError(t, err)
			if tt.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, tt.answer, string(body))
		})
	}
}
