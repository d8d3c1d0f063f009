package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/event"
)

func TestError_MatchesSentinelByCodeElseByStatus(t *testing.T) {
	// The server answers with the status the path names, and the code
	// the query names, if any.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, err := strconv.Atoi(r.URL.Path[1:])
		if err != nil {
			status = http.StatusTeapot
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		body, _ := json.Marshal(api.ErrorBody{Detail: "why", Code: r.URL.Query().Get("code")})
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	c := New(srv.URL)

	sentinels := []error{ErrUnauthorized, ErrNotReady, ErrNotFound, ErrBusy, ErrExists, ErrBadRequest}
	for _, tc := range []struct {
		status int
		code   string
		want   error // nil: none of the sentinels
	}{
		// Without a code (upstream's routes, an older server): the status.
		{http.StatusBadRequest, "", ErrBadRequest},
		{http.StatusUnauthorized, "", ErrUnauthorized},
		{http.StatusForbidden, "", ErrUnauthorized},
		{http.StatusNotFound, "", ErrNotFound},
		{http.StatusConflict, "", ErrBusy},
		{http.StatusServiceUnavailable, "", ErrNotReady},
		{http.StatusUnprocessableEntity, "", nil},
		{http.StatusInternalServerError, "", nil},
		// With a code: the code, whatever the status.
		{http.StatusConflict, api.CodeBusy, ErrBusy},
		{http.StatusConflict, api.CodeExists, ErrExists},
		{http.StatusConflict, api.CodeConflict, nil},
		{http.StatusForbidden, api.CodeUnauthorized, ErrUnauthorized},
		{http.StatusForbidden, api.CodeForbidden, nil},
		{http.StatusForbidden, api.CodePermission, nil},
		{http.StatusBadRequest, api.CodeInvalid, ErrBadRequest},
		{http.StatusBadRequest, api.CodePathEscapes, ErrBadRequest},
		{http.StatusUnprocessableEntity, api.CodeInvalid, ErrBadRequest},
		{http.StatusNotFound, api.CodeNotFound, ErrNotFound},
		{http.StatusServiceUnavailable, api.CodeUnavailable, ErrNotReady},
		{http.StatusTooManyRequests, api.CodeLimit, nil},
	} {
		t.Run(strconv.Itoa(tc.status)+" "+tc.code, func(t *testing.T) {
			err := c.do(t.Context(), http.MethodGet, "/"+strconv.Itoa(tc.status)+"?code="+tc.code, nil, nil)
			var apiErr *Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.status, apiErr.StatusCode)
			assert.Equal(t, tc.code, apiErr.Code)
			assert.Equal(t, "why", apiErr.Detail)
			for _, s := range sentinels {
				assert.Equal(t, s == tc.want, errors.Is(err, s), "errors.Is(%d %q, %v)", tc.status, tc.code, s)
			}
		})
	}
}

func TestError_TemporaryOnlyForTheServersSide(t *testing.T) {
	for _, tc := range []struct {
		err  Error
		want bool
	}{
		{Error{StatusCode: http.StatusServiceUnavailable}, true},
		{Error{StatusCode: http.StatusServiceUnavailable, Code: api.CodeUnavailable}, true},
		{Error{StatusCode: http.StatusInternalServerError, Code: api.CodeInternal}, true},
		{Error{StatusCode: http.StatusBadGateway}, true},
		{Error{StatusCode: http.StatusNotFound, Code: api.CodeNotFound}, false},
		{Error{StatusCode: http.StatusConflict}, false},
		{Error{StatusCode: http.StatusForbidden, Code: api.CodeUnauthorized}, false},
	} {
		t.Run(tc.err.Error()+" "+tc.err.Code, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.err.Temporary())
		})
	}
}

// deadlineRecorder sends requests over the default transport and notes
// the deadline each one carried.
type deadlineRecorder struct {
	mu       sync.Mutex
	deadline time.Time
	has      bool
}

func (d *deadlineRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	d.mu.Lock()
	d.deadline, d.has = r.Context().Deadline()
	d.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func TestExecute_DeadlineIsActionTimeoutPlusFiveSeconds(t *testing.T) {
	var hold atomic.Int64 // how long the server takes to answer; -1: never
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets net/http notice the client hanging up.
		io.Copy(io.Discard, r.Body)
		d := hold.Load()
		if d < 0 {
			select { // until the client gives up (bounded)
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
			return
		}
		time.Sleep(time.Duration(d))
		b, err := event.EncodeObservation(&event.CmdOutput{Content: "ok", Command: "true",
			Metadata: event.CmdMetadata{PID: -1, Suffix: "\n[The command completed with exit code 0.]"}})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	rec := &deadlineRecorder{}
	c := New(srv.URL, WithHTTPClient(&http.Client{Transport: rec}))
	action := func(timeout float64) event.Action {
		a := event.NewCmdRun("true")
		if timeout > 0 {
			a.Timeout = &timeout
		}
		return a
	}
	const tiny = 0.05 // seconds

	// The request's deadline is the action's timeout plus the slack,
	// counted from the call.
	hold.Store(0)
	before := time.Now()
	_, err := c.Execute(context.Background(), action(tiny))
	after := time.Now()
	require.NoError(t, err)
	want := time.Duration(tiny*float64(time.Second)) + 5*time.Second
	require.True(t, rec.has, "a timed action's request has a deadline")
	assert.False(t, rec.deadline.Before(before.Add(want)), "deadline %v, want at least %v", rec.deadline, before.Add(want))
	assert.False(t, rec.deadline.After(after.Add(want)), "deadline %v, want at most %v", rec.deadline, after.Add(want))

	// A server that answers after the action's timeout, within the slack,
	// is still heard.
	hold.Store(int64(300 * time.Millisecond))
	obs, err := c.Execute(context.Background(), action(tiny))
	require.NoError(t, err)
	assert.Equal(t, "ok", obs.Text())

	// Without a timeout the request has no deadline of its own.
	hold.Store(0)
	_, err = c.Execute(context.Background(), action(0))
	require.NoError(t, err)
	assert.False(t, rec.has)

	// A server that never answers is given up on at the deadline.
	hold.Store(-1)
	_, err = c.Execute(context.Background(), action(tiny))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}
