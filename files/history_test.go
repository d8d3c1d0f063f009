package files

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/internal/chown"
)

// Editors that share a HistoryDir share the undo history, as separate
// file_editor calls from the kernel (one process each) must.
func TestEditor_HistoryDirOutlivesTheEditor(t *testing.T) {
	hist := t.TempDir()
	p := filepath.Join(t.TempDir(), "f.txt")
	require.NoError(t, os.WriteFile(p, []byte("one\n"), 0o644))
	ctx := context.Background()

	first := &Editor{HistoryDir: hist, Owner: chown.Keep}
	oldS, newS := "one", "two"
	_, err := first.Do(ctx, EditRequest{Command: CmdStrReplace, Path: p, OldStr: &oldS, NewStr: &newS})
	require.NoError(t, err)
	require.NoError(t, first.Close())

	second := &Editor{HistoryDir: hist, Owner: chown.Keep}
	res, err := second.Do(ctx, EditRequest{Command: CmdUndoEdit, Path: p})
	require.NoError(t, err)
	assert.Contains(t, res.Output, "undone successfully")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "one\n", string(data))

	_, err = second.Do(ctx, EditRequest{Command: CmdUndoEdit, Path: p})
	fe, ok := IsError(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, "No edit history found for "+p+".", fe.Msg)
	_, err = os.Stat(hist)
	assert.NoError(t, err, "Close keeps a given history directory")
}
