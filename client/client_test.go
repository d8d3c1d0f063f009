package client

import (
	"context"
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

	"github.com/actionserver/actionserver/event"
)

func TestError_MatchesSentinelByStatus(t *testing.T) {
	// The server answers with the status the path names.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, err := strconv.Atoi(r.URL.Path[1:])
		if err != nil {
			status = http.StatusTeapot
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(`{"detail": "why"}`))
	}))
	t.Cleanup(srv.Close)
	c := New(srv.URL)

	sentinels := []error{ErrUnauthorized, ErrNotReady, ErrNotFound, ErrBusy, ErrBadRequest}
	for _, tc := range []struct {
		status int
		want   error // nil: none of the sentinels
	}{
		{http.StatusBadRequest, ErrBadRequest},
		{http.StatusUnauthorized, ErrUnauthorized},
		{http.StatusForbidden, ErrUnauthorized},
		{http.StatusNotFound, ErrNotFound},
		{http.StatusConflict, ErrBusy},
		{http.StatusServiceUnavailable, ErrNotReady},
		{http.StatusUnprocessableEntity, nil},
		{http.StatusInternalServerError, nil},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			err := c.do(t.Context(), http.MethodGet, "/"+strconv.Itoa(tc.status), nil, nil)
			var apiErr *Error
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.status, apiErr.StatusCode)
			assert.Equal(t, "why", apiErr.Detail)
			for _, s := range sentinels {
				assert.Equal(t, s == tc.want, errors.Is(err, s), "errors.Is(%d, %v)", tc.status, s)
			}
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
