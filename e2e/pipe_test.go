package e2e

import (
	"crypto/sha256"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
)

func TestActionctl_ExecPipe(t *testing.T) {
	s := startServer(t, startOpts{})
	// The terminal's state: a directory the piped command starts in.
	_, err := s.Client.Run(ctxT(t), "mkdir -p sub && cd sub", client.RunOptions{})
	require.NoError(t, err)

	cases := []struct {
		name    string
		command string
		stdout  string
		code    int
	}{
		{"output, errors and the exit code", "echo out; echo err >&2; exit 5", "out\nerr\n", 5},
		{"the session's directory, no terminal", `echo "$PWD"; [ -t 1 ] || echo notty`, s.WorkDir + "/sub\nnotty\n", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := actionctl(t, nil, "--url", s.URL, "exec", "--pipe", tc.command)
			assert.Equal(t, tc.code, r.code, r.stderr)
			assert.Equal(t, tc.stdout, r.stdout)
		})
	}

	t.Run("bulk output, every byte", func(t *testing.T) {
		r := actionctl(t, nil, "--url", s.URL, "exec", "--pipe", "seq 1 1000000")
		require.Equal(t, 0, r.code, r.stderr)
		want, err := exec.Command("seq", "1", "1000000").Output()
		require.NoError(t, err)
		assert.Equal(t, sha256.Sum256(want), sha256.Sum256([]byte(r.stdout)))
	})

	// Piped commands leave the terminal alone: it is where it was.
	obs, err := s.Client.Run(ctxT(t), "pwd", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, s.WorkDir+"/sub", obs.Content)
}
