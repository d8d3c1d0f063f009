package vscode

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/plugins"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestStart_DisabledCasesLeaveTheServerRunning(t *testing.T) {
	busy, err := net.Listen("tcp", ":0")
	require.NoError(t, err)
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	fakeBin := filepath.Join(t.TempDir(), "no-such-server")

	cases := []struct {
		name, user string
		environ    []string
		reason     string
	}{
		{"user not allowed", "someone", []string{"VSCODE_PORT=" + strconv.Itoa(freePort(t))}, "not someone"},
		{"no port", "root", nil, "VSCODE_PORT is not set"},
		{"port not a number", "root", []string{"VSCODE_PORT=abc"}, "VSCODE_PORT is not set"},
		{"no server", "root", []string{"VSCODE_PORT=" + strconv.Itoa(freePort(t)), ServerBinEnv + "=" + fakeBin}, "no VS Code server found"},
		{"port busy", "openhands", []string{"VSCODE_PORT=" + strconv.Itoa(busyPort), ServerBinEnv + "=" + os.Args[0]}, "is not free"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := New().(*Plugin)
			env := plugins.Env{Username: tc.user, WorkDir: t.TempDir(), Environ: tc.environ, Logger: slog.New(slog.DiscardHandler)}
			require.NoError(t, p.Start(context.Background(), env), "a disabled plugin does not stop start-up")
			st := p.Status()
			assert.Equal(t, plugins.StateDisabled, st.State)
			assert.Contains(t, st.Error, tc.reason)
			assert.Nil(t, p.Token())
			assert.NoError(t, p.Stop(context.Background()))
		})
	}
}

func TestBasePath_FollowsPathRoutedRuntimes(t *testing.T) {
	assert.Equal(t, "/rt42/vscode", basePath("https://host.example/rt42/api", "rt42"))
	assert.Equal(t, "", basePath("https://rt42.host.example/", "rt42"))
	assert.Equal(t, "", basePath("", "rt42"))
}

func TestNewToken_IsAUUID4(t *testing.T) {
	tok := newToken()
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, tok)
	assert.NotEqual(t, tok, newToken())
}
