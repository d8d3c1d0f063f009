package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
)

func TestLogRequests_DebugButForFailures(t *testing.T) {
	var logs bytes.Buffer
	s := New(Options{IdleTrim: -1, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	s.engine.GET("/fails", func(c *gin.Context) { c.Status(http.StatusInternalServerError) })

	cases := []struct {
		path, level string
	}{
		{"/openapi.json", "DEBUG"},
		{"/alive", "DEBUG"}, // 503: not ready, which is no failure
		{"/fails", "INFO"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			logs.Reset()
			// In process: the line is written once the handler returns.
			s.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+tc.path, nil))
			line := strings.TrimSpace(logs.String())
			assert.Contains(t, line, "level="+tc.level)
			assert.Contains(t, line, "path="+tc.path)
		})
	}
}
