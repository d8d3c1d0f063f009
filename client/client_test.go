package client

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
