package main

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/actionserver/actionserver/internal/serverflags"
)

// Each timeout of the environment configures the part that reads it: the
// no-change timeout is OpenHands' run policy's, not the terminal engine's.
func TestExecutorOptions_TimeoutsReachWhatReadsThem(t *testing.T) {
	sb := &sandbox{user: &sandboxUser{Name: "u"}, workDir: t.TempDir()}
	to := timeouts{noChange: 3 * time.Second, mcpCall: 4 * time.Second, shellStart: 5 * time.Second}
	opts := sb.executorOptions(serverflags.Config{}, to, time.Now(), nil, slog.Default())
	assert.Equal(t, 3*time.Second, opts.Run.NoChangeTimeout)
	assert.Equal(t, 4*time.Second, opts.MCPTimeout)
	assert.Equal(t, 5*time.Second, opts.Shell.StartTimeout)
}
