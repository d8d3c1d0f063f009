package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
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

// TestCodeOf_ErrorsThatShareAStatusDoNotShareACode: a program tells a
// taken session id from a busy session by the code, both being 409s.
func TestCodeOf_ErrorsThatShareAStatusDoNotShareACode(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{executor.ErrSessionExists, api.CodeExists},
		{fmt.Errorf("create: %w", executor.ErrSessionExists), api.CodeExists},
		{executor.ErrPathExists, api.CodeExists},
		{executor.ErrBusy, api.CodeBusy},
		{executor.ErrNotRunning, api.CodeConflict},
		{executor.ErrNotEmpty, api.CodeConflict},
		{executor.ErrPathEscapes, api.CodePathEscapes},
		{executor.ErrBadSessionID, api.CodeInvalid},
		{executor.ErrSessionNotFound, api.CodeNotFound},
		{executor.ErrTooManySessions, api.CodeLimit},
		{executor.ErrZipTooLarge, api.CodeTooLarge},
		{executor.ErrNoPTY, api.CodeUnavailable},
		{executor.ErrClosed, api.CodeUnavailable},
		{executor.ErrNoSpace, api.CodeNoSpace},
		{executor.ErrPermission, api.CodePermission},
		{errors.New("a fault"), api.CodeInternal},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			assert.Equal(t, tt.want, codeOf(tt.err))
		})
	}
}

func TestUpstreamText_RefusalsCarryTheirStatus(t *testing.T) {
	assert.Equal(t, "404: File not found", upstreamText(executor.ErrFileNotFound))
	assert.Equal(t, "disk full", upstreamText(errors.New("disk full")))
}

// TestSessionRoutes_Refusals pins the status and body of each refusal of
// the sessions API: the wire the clients read. Every refusal of a native
// route carries its code; those of the OpenHands routes carry none.
func TestSessionRoutes_Refusals(t *testing.T) {
	_, url := newTestServer(t, true, nil)
	tests := []struct {
		method, path, body string
		status             int
		answer             string
	}{
		{"POST", "/sessions", `{"id": "a b"}`, 400,
			`{"detail":"a session id is 1 to 64 letters, digits, '.', '_' or '-', and not '.' or '..'","code":"invalid"}`},
		{"POST", "/sessions", `{"id": "default"}`, 409, `{"detail":"a session with this id exists","code":"exists"}`},
		{"POST", "/sessions", `{"name": "x"}`, 422,
			`{"detail":"Invalid request parameters","errors":"unknown field \"name\"","code":"invalid"}`},
		{"POST", "/sessions", `{"id": 7}`, 422,
			`{"detail":"Invalid request parameters","errors":"field \"id\" must be a string, not number","code":"invalid"}`},
		{"POST", "/sessions", `{"cwd": "/nonexistent-dir"}`, 400, `{"detail":"cwd \"/nonexistent-dir\": no such directory","code":"invalid"}`},
		{"POST", "/sessions", `{"cwd": "/etc/hostname"}`, 400, `{"detail":"cwd \"/etc/hostname\" is not a directory","code":"invalid"}`},
		{"POST", "/sessions", `{"cwd": "/tmp\u0000x"}`, 400, `{"detail":"cwd must not contain NUL bytes","code":"invalid"}`},
		{"POST", "/sessions", `{"env": {"A=B": "c"}}`, 400, `{"detail":"env: \"A=B\" is not a variable name (empty, or holds '=' or NUL)","code":"invalid"}`},
		{"POST", "/sessions", `{"env": {"A": "c\u0000"}}`, 400, `{"detail":"env: the value of A holds a NUL byte","code":"invalid"}`},
		{"POST", "/sessions/default/commands", `{"command": "true", "pipe": true, "cwd": "/nonexistent-dir"}`, 400,
			`{"detail":"cwd \"/nonexistent-dir\": no such directory","code":"invalid"}`},
		{"POST", "/sessions/default/commands", `{"command": "true", "pipe": true, "env": {"": "x"}}`, 400,
			`{"detail":"env: \"\" is not a variable name (empty, or holds '=' or NUL)","code":"invalid"}`},
		{"POST", "/sessions", `{"id": "."}`, 400,
			`{"detail":"a session id is 1 to 64 letters, digits, '.', '_' or '-', and not '.' or '..'","code":"invalid"}`},
		{"POST", "/sessions", `{"id": ".."}`, 400,
			`{"detail":"a session id is 1 to 64 letters, digits, '.', '_' or '-', and not '.' or '..'","code":"invalid"}`},
		{"GET", "/sessions/nope", "", 404, `{"detail":"session nope not found","code":"not_found"}`},
		{"DELETE", "/sessions/nope", "", 404, `{"detail":"session nope not found","code":"not_found"}`},
		{"DELETE", "/sessions/default", "", 400,
			`{"detail":"the default session serves run actions and cannot be deleted","code":"invalid"}`},
		{"POST", "/sessions/default/commands", `{"command": " "}`, 400, `{"detail":"command must not be empty","code":"invalid"}`},
		{"GET", "/sessions/default/commands/x", "", 400, `{"detail":"command id must be an integer","code":"invalid"}`},
		{"GET", "/sessions/default/commands/007/output", "", 404,
			`{"detail":"command 007 not found in session default","code":"not_found"}`},
		{"POST", "/sessions/default/input", `{}`, 400,
			`{"detail":"send either \"text\" (with optional \"enter\") or \"key\"","code":"invalid"}`},
		{"POST", "/sessions/default/input", `{"text": "x"}`, 409, `{"detail":"no command is running in this session","code":"conflict"}`},
		{"POST", "/sessions/default/input", `{"key": "C-nope"}`, 400, `{"detail":"unknown key name","code":"invalid"}`},
		{"POST", "/sessions/default/signal", `{"signal": "hup"}`, 400,
			`{"detail":"signal must be SIGINT, SIGTERM or SIGKILL","code":"invalid"}`},
		{"POST", "/sessions/default/signal", `{"signal": "int"}`, 409, `{"detail":"no command is running in this session","code":"conflict"}`},
		{"POST", "/sessions/default/resize", `{"rows": 0, "cols": 80}`, 400, `{"detail":"rows and cols must be positive","code":"invalid"}`},
		{"POST", "/sessions/default/resize", `{"rows": 70000}`, 422,
			`{"detail":"Invalid request parameters","errors":"field \"rows\" must be an integer from 0 to 65535, not 70000","code":"invalid"}`},
		{"POST", "/list_files", `{"path": 5}`, 400,
			`{"detail":"the body must be a JSON object with an optional string \"path\": field \"path\" must be a string, not number"}`},
		{"POST", "/list_files", `[]`, 400,
			`{"detail":"the body must be a JSON object with an optional string \"path\": expected an object, not array"}`},
		{"GET", "/watch?path=/nonexistent-dir", "", 404,
			`{"detail":"watch /nonexistent-dir: stat /nonexistent-dir: no such file or directory","code":"not_found"}`},
		{"GET", "/download_files?path=relative", "", 500, `{"detail":"400: Path must be an absolute path"}`},
		{"GET", "/sessions/default/nope", "", 404, `{"detail":"Not Found","code":"not_found"}`},
		{"GET", "/nope", "", 404, `{"detail":"Not Found"}`},
		{"PUT", "/sessions", "", 405, `{"detail":"Method Not Allowed","code":"method_not_allowed"}`},
		{"POST", "/claim", `{"api_key": "k"}`, 404,
			`{"detail":"Late binding is not enabled: the server was started with its key","code":"not_found"}`},
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

// TestSessionRoutes_BusyAndExistsAreTold: both are 409s; the code says
// which.
func TestSessionRoutes_BusyAndExistsAreTold(t *testing.T) {
	_, url := newTestServer(t, true, nil)
	post := func(path, body string) (int, api.ErrorBody) {
		resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		var eb api.ErrorBody
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		if resp.StatusCode/100 != 2 {
			require.NoError(t, json.Unmarshal(data, &eb), "%s", data)
		}
		return resp.StatusCode, eb
	}
	st, _ := post("/sessions", `{"id": "s1"}`)
	require.Equal(t, http.StatusCreated, st)
	st, _ = post("/sessions/s1/commands", `{"command": "sleep 30"}`)
	require.Equal(t, http.StatusAccepted, st)
	t.Cleanup(func() { post("/sessions/s1/signal", `{"signal": "SIGKILL"}`) })

	st, eb := post("/sessions/s1/commands", `{"command": "true"}`)
	assert.Equal(t, http.StatusConflict, st)
	assert.Equal(t, api.CodeBusy, eb.Code, eb.Detail)
	st, eb = post("/sessions", `{"id": "s1"}`)
	assert.Equal(t, http.StatusConflict, st)
	assert.Equal(t, api.CodeExists, eb.Code, eb.Detail)
}

// TestWireNames_TheExecutorsDefaultSessionIsTheAPIs: the executor names
// its default session itself (it knows no wire format); the name the
// clients use is api's.
func TestWireNames_TheExecutorsDefaultSessionIsTheAPIs(t *testing.T) {
	assert.Equal(t, api.DefaultSession, executor.DefaultSession)
}
