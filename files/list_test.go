package files

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestList(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"b.txt": "", "A.txt": "", ".env": "", "c/x": "", "B/y": "", ".git/z": ""})
	require.NoError(t, os.Symlink("nowhere", dir+"/broken"))
	require.NoError(t, os.Symlink("c", dir+"/linkdir"))
	assert.Equal(t, []string{".git/", "B/", "c/", "linkdir/", ".env", "A.txt", "b.txt"}, List(dir))
}

func TestList_NotADirectoryIsEmpty(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f": ""})
	for _, p := range []string{dir + "/f", dir + "/missing"} {
		got := List(p)
		assert.NotNil(t, got, "an empty list, not null")
		assert.Empty(t, got)
	}
}
