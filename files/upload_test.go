package files

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/chown"
)

// A large file replaced by an upload (the name-swap path) ends up with the
// new content, its old mode, and no leftover temporary file.
func TestReceiveFile_ReplacesLargeFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "big.bin")
	old := bytes.Repeat([]byte("o"), exchangeSize+1)
	require.NoError(t, os.WriteFile(target, old, 0o640))
	fresh := bytes.Repeat([]byte("n"), exchangeSize+7)

	n, err := ReceiveFile(context.Background(), dir, "big.bin", bytes.NewReader(fresh), chown.Keep)
	require.NoError(t, err)
	assert.EqualValues(t, len(fresh), n)
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(fresh, got), "new content in place")
	fi, err := os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the old file's mode is kept")
	assert.Eventually(t, func() bool {
		ents, _ := os.ReadDir(dir)
		return len(ents) == 1
	}, 5*time.Second, 10*time.Millisecond, "the old content is removed")
}

func TestReceiveFile_RefusesPathNames(t *testing.T) {
	for _, name := range []string{"", ".", "..", "a/b", "../x"} {
		_, err := ReceiveFile(context.Background(), t.TempDir(), name, bytes.NewReader(nil), chown.Keep)
		assert.ErrorIs(t, err, ErrNotPlainName, name)
	}
}
