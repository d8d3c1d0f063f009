package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteURLFile_OnlyAFileOfTheServersOwn(t *testing.T) {
	const url = "http://localhost:40001"
	tests := []struct {
		name   string
		plant  func(t *testing.T, path, victim string)
		refuse string // a part of the reason; "" when written
	}{
		{"missing", func(*testing.T, string, string) {}, ""},
		{"the server's own, longer", func(t *testing.T, path, _ string) {
			require.NoError(t, os.WriteFile(path, []byte("http://localhost:123456789"), 0o644))
		}, ""},
		{"a symbolic link", func(t *testing.T, path, victim string) {
			require.NoError(t, os.Symlink(victim, path))
		}, "symbolic link"},
		{"a dangling symbolic link", func(t *testing.T, path, victim string) {
			require.NoError(t, os.Symlink(victim+".new", path))
		}, "symbolic link"},
		{"a hard link", func(t *testing.T, path, victim string) {
			require.NoError(t, os.Link(victim, path))
		}, "hard links"},
		{"a FIFO", func(t *testing.T, path, _ string) {
			require.NoError(t, syscall.Mkfifo(path, 0o666))
		}, "not a regular file"},
		{"a directory", func(t *testing.T, path, _ string) {
			require.NoError(t, os.Mkdir(path, 0o755))
		}, "directory"},
		{"another user's", func(t *testing.T, path, _ string) {
			if os.Geteuid() != 0 {
				t.Skip("giving a file away needs root")
			}
			require.NoError(t, os.WriteFile(path, []byte("http://localhost:1"), 0o666))
			require.NoError(t, os.Chown(path, 1990, 1990))
		}, "belongs to uid 1990"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "oh-server-url")
			victim := filepath.Join(dir, "victim")
			require.NoError(t, os.WriteFile(victim, []byte("precious\n"), 0o600))
			tt.plant(t, path, victim)

			err := writeURLFile(path, url)
			data, _ := os.ReadFile(victim)
			assert.Equal(t, "precious\n", string(data), "what a link points to is never written")
			_, statErr := os.Stat(victim + ".new")
			assert.ErrorIs(t, statErr, os.ErrNotExist, "nothing is created through a link")
			if tt.refuse != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.refuse)
				return
			}
			require.NoError(t, err)
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, url, string(got))
		})
	}
}
