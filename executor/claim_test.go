package executor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClaim_RefusesBadInput(t *testing.T) {
	e := newExecutor(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		dir  string
		want error
	}{
		{"env name with a dash", map[string]string{"A-B": "1"}, "", ErrBadEnvName},
		{"env name starting with a digit", map[string]string{"1A": "1"}, "", ErrBadEnvName},
		{"relative dir", nil, "tmp", ErrBadClaimDir},
		{"missing dir", nil, "/no/such/dir", ErrBadClaimDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := e.Claim(context.Background(), tc.env, tc.dir)
			assert.ErrorIs(t, err, tc.want)
			assert.Equal(t, KindInvalid, KindOf(err))
		})
	}
}

func TestClaim_EnvAndDirReachEveryShell(t *testing.T) {
	e := newExecutor(t)
	dir := t.TempDir()
	ctx := context.Background()
	require.NoError(t, e.Claim(ctx, map[string]string{"CLAIMED": "a b 'c'\nd"}, dir))

	check := func(name string, s *Session, pipe bool) {
		t.Helper()
		var c *Command
		var err error
		if pipe {
			c, err = s.StartPipe(ctx, `printf '%s|' "$CLAIMED"; pwd`, "", nil)
		} else {
			c, err = s.Start(ctx, `printf '%s|' "$CLAIMED"; pwd`)
		}
		require.NoError(t, err, name)
		select {
		case <-c.Done():
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: command did not finish", name)
		}
		out := string(c.Read(0, -1).Data)
		assert.Contains(t, out, "a b 'c'", name)
		if !pipe {
			assert.Equal(t, dir, strings.TrimSpace(out[strings.LastIndexByte(out, '|')+1:]), name)
		}
	}
	def, err := e.Session(ctx, DefaultSession)
	require.NoError(t, err)
	check("default session", def, false)
	check("default session, piped", def, true)
	later, err := e.CreateSession(ctx, SessionOptions{ID: "later"})
	require.NoError(t, err)
	check("a session started after the claim", later, false)
}

func TestClaim_WithoutEnvOrDirLeavesARunningCommandAlone(t *testing.T) {
	e := newExecutor(t)
	ctx := context.Background()
	def, err := e.Session(ctx, DefaultSession)
	require.NoError(t, err)
	c, err := def.Start(ctx, "sleep 0.3; echo survived")
	require.NoError(t, err)
	require.NoError(t, e.Claim(ctx, nil, ""), "a key rotation needs nothing of the shell")
	assert.ErrorIs(t, e.Claim(ctx, map[string]string{"X": "1"}, ""), ErrBusy)
	<-c.Done()
	assert.Contains(t, string(c.Read(0, -1).Data), "survived")
}
