package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reportUserEnv makes the test binary, started again under another uid,
// print what setupUser found instead of running tests.
const reportUserEnv = "ACTION_SERVER_TEST_REPORT_USER"

func TestMain(m *testing.M) {
	if name, ok := os.LookupEnv(reportUserEnv); ok {
		u, err := setupUser(name, -1, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		_ = json.NewEncoder(os.Stdout).Encode(u)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSetupUser_AnArbitraryUIDWithoutUSERStarts(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("starting a process under another uid needs root")
	}
	const uid = 54321
	_, err := user.LookupId(strconv.Itoa(uid))
	require.Error(t, err, "uid %d must have no passwd entry for this test", uid)

	// The test binary, where that uid can run it.
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	self, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(dir, "server.test")
	data, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))

	for _, tc := range []struct {
		name     string
		env      []string
		sandbox  string
		wantName string
		wantHome string
	}{
		{"no USER, no HOME", nil, "", strconv.Itoa(uid), "/"},
		{"HOME given", []string{"HOME=/tmp"}, "", strconv.Itoa(uid), "/tmp"},
		{"USER given", []string{"USER=builder"}, "", "builder", "/"},
		// The image's sandbox user cannot be switched to without root:
		// the server keeps its own uid.
		{"a sandbox user asked for", nil, "root", strconv.Itoa(uid), "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin)
			cmd.Env = append([]string{reportUserEnv + "=" + tc.sandbox}, tc.env...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
			out, err := cmd.Output()
			require.NoError(t, err, "stderr: %s", exitStderr(err))
			var got sandboxUser
			require.NoError(t, json.Unmarshal(out, &got), "%s", out)
			assert.Equal(t, tc.wantName, got.Name)
			assert.Equal(t, uid, got.UID)
			assert.Equal(t, uid, got.GID)
			assert.Equal(t, tc.wantHome, got.Home)
			assert.Nil(t, got.Credential)
		})
	}
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
