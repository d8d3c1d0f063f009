package browser

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/asuser"
	"github.com/actionserver/actionserver/internal/chown"
)

// A download is copied into the agent's workspace: a link planted where
// the copy goes, or where Chromium's file was, must not let a root server
// write or read past the sandbox user's rights.
func TestDownloadCopy_FollowsNoLinkPastTheUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	top := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(top), 0o755))
	require.NoError(t, os.Chmod(top, 0o755))
	ws := filepath.Join(top, "ws")
	require.NoError(t, os.Mkdir(ws, 0o777))
	require.NoError(t, os.Chmod(ws, 0o777))
	secret := filepath.Join(top, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("root only"), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(ws, "file_1.pdf")))
	require.NoError(t, os.Symlink(secret, filepath.Join(ws, "guid")))
	user := &asuser.User{UID: 65534, GID: 65534}

	err := copyTo(strings.NewReader("downloaded"), filepath.Join(ws, "file_1.pdf"), chown.Keep, user)
	assert.ErrorIs(t, err, os.ErrPermission)
	data, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, "root only", string(data), "not written through the link")

	_, err = openDownload(filepath.Join(ws, "guid"))
	assert.Error(t, err, "a link where the download was is not followed")

	require.NoError(t, copyTo(strings.NewReader("downloaded"), filepath.Join(ws, "file_2.pdf"), chown.Keep, user))
	fi, err := os.Stat(filepath.Join(ws, "file_2.pdf"))
	require.NoError(t, err)
	assert.EqualValues(t, 65534, fi.Sys().(*syscall.Stat_t).Uid, "the user's own file")
}

func TestScreenshot_SavedWithTheUsersRights(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another user")
	}
	top := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(top), 0o755))
	require.NoError(t, os.Chmod(top, 0o755))
	ws := filepath.Join(top, "ws")
	require.NoError(t, os.Mkdir(ws, 0o777))
	require.NoError(t, os.Chmod(ws, 0o777))
	closed := filepath.Join(top, "closed")
	require.NoError(t, os.Mkdir(closed, 0o700))
	require.NoError(t, os.Symlink(closed, filepath.Join(ws, ".browser_screenshots")))

	b := New(Options{WorkDir: ws, FileUser: &asuser.User{UID: 65534, GID: 65534}})
	_, err := b.saveScreenshot([]byte("png"))
	assert.ErrorIs(t, err, os.ErrPermission)
	entries, err := os.ReadDir(closed)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written into the root-only directory")

	require.NoError(t, os.Remove(filepath.Join(ws, ".browser_screenshots")))
	p, err := b.saveScreenshot([]byte("png"))
	require.NoError(t, err)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.EqualValues(t, 65534, fi.Sys().(*syscall.Stat_t).Uid)
}
