package e2e

import (
	"bytes"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
)

func TestActionctl_CpBothWaysWithResume(t *testing.T) {
	s := startServer(t, startOpts{})
	local := t.TempDir()
	data := make([]byte, 3<<20+17)
	_, err := rand.Read(data)
	require.NoError(t, err)
	src := filepath.Join(local, "data.bin")
	require.NoError(t, os.WriteFile(src, data, 0o640))
	url := []string{"--url", s.URL}

	// Up, to a path relative to the workspace.
	r := actionctl(t, nil, append(url, "cp", src, ":in/data.bin")...)
	require.Equal(t, 0, r.code, r.stderr)
	got, err := os.ReadFile(filepath.Join(s.WorkDir, "in/data.bin"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got))
	fi, err := os.Stat(filepath.Join(s.WorkDir, "in/data.bin"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the local mode goes along")

	// Down, into a directory.
	r = actionctl(t, nil, append(url, "cp", ":in/data.bin", local+"/")...)
	require.Equal(t, 0, r.code, r.stderr)
	got, err = os.ReadFile(filepath.Join(local, "data.bin"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got))

	// A download that stopped midway continues from its part.
	dst := filepath.Join(local, "resumed.bin")
	require.NoError(t, os.WriteFile(dst+".part", data[:1<<20], 0o644))
	r = actionctl(t, nil, append(url, "cp", "--resume", ":in/data.bin", dst)...)
	require.Equal(t, 0, r.code, r.stderr)
	got, err = os.ReadFile(dst)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got))
	_, err = os.Stat(dst + ".part")
	assert.True(t, os.IsNotExist(err), "the part is renamed")

	// An upload that stopped midway continues from its part in the
	// sandbox, which is renamed once complete.
	part := filepath.Join(s.WorkDir, "up.bin.part")
	require.NoError(t, os.WriteFile(part, data[:2<<20], 0o644))
	r = actionctl(t, nil, append(url, "cp", "--resume", src, ":up.bin")...)
	require.Equal(t, 0, r.code, r.stderr)
	got, err = os.ReadFile(filepath.Join(s.WorkDir, "up.bin"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data, got))
	_, err = os.Stat(part)
	assert.True(t, os.IsNotExist(err))

	// Both sides local, or both remote: a usage error.
	r = actionctl(t, nil, append(url, "cp", src, dst)...)
	assert.Equal(t, 2, r.code)
	// A path out of the workspace is refused with its reason.
	r = actionctl(t, nil, append(url, "cp", src, ":../escape.bin")...)
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.stderr, "out of the workspace")
}

func TestClient_FileRoutes(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	c := s.Client
	w, err := c.WriteFile(ctx, "d/f.txt", strings.NewReader("hello, world"), client.WriteFileOptions{Mode: "600"})
	require.NoError(t, err)
	assert.Equal(t, int64(12), w.Size)

	r, err := c.OpenFile(ctx, "d/f.txt", 7)
	require.NoError(t, err)
	b, err := io.ReadAll(r)
	r.Close()
	require.NoError(t, err)
	assert.Equal(t, "world", string(b))
	assert.Equal(t, [3]any{int64(7), int64(12), "0600"}, [3]any{r.Offset, r.Size, r.Mode})
	_, err = c.OpenFile(ctx, "d/f.txt", 100)
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, api.CodeRangeUnsatisfied, ce.Code)

	require.NoError(t, c.Mkdir(ctx, "d/e/f", "700", true))
	require.NoError(t, c.Chmod(ctx, "d/f.txt", "644"))
	list, err := c.ListDir(ctx, "d")
	require.NoError(t, err)
	var got []string
	for _, e := range list.Entries {
		got = append(got, e.Name+" "+e.Type+" "+e.Mode)
	}
	assert.Equal(t, []string{"e dir 0755", "f.txt file 0644"}, got, "parents get 0755; the last one its mode")
	err = c.Remove(ctx, "d", false)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, api.CodeConflict, ce.Code)
	require.NoError(t, c.Remove(ctx, "d", true))
	_, err = c.StatFile(ctx, "d")
	assert.ErrorIs(t, err, client.ErrNotFound)
	_, err = os.Stat(filepath.Join(s.WorkDir, "d"))
	assert.True(t, os.IsNotExist(err))

	// A symlink the agent made cannot lead a relative path out.
	require.NoError(t, os.Symlink("/etc", filepath.Join(s.WorkDir, "etc-link")))
	_, err = c.OpenFile(ctx, "etc-link/hostname", 0)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, api.CodePathEscapes, ce.Code)
	_, err = c.WriteFile(ctx, "etc-link/planted", strings.NewReader("x"), client.WriteFileOptions{})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, api.CodePathEscapes, ce.Code)
	_, err = os.Stat("/etc/planted")
	assert.True(t, os.IsNotExist(err))
}

func TestFileRoutes_CreatedFilesBelongToTheSandboxUser(t *testing.T) {
	s, ws := startAsSandboxUser(t)
	ctx := ctxT(t)
	_, err := s.Client.WriteFile(ctx, "made/by/put.bin", strings.NewReader("x"), client.WriteFileOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Client.Mkdir(ctx, "made/dir", "", false))
	for _, p := range []string{"made", "made/by", "made/by/put.bin", "made/dir"} {
		info, err := s.Client.StatFile(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, testUID, info.UID, "%s belongs to the sandbox user", p)
		fi, err := os.Stat(filepath.Join(ws, p))
		require.NoError(t, err)
		assert.Equal(t, uint32(testUID), fi.Sys().(*syscall.Stat_t).Uid)
	}
}
