package files

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func sp(s string) *string { return &s }

// il is an insert_line sent as a string.
func il(s string) *InsertLine { l := InsertLine(s); return &l }

// run renders an editor call as the agent sees it.
func run(t *testing.T, ed *Editor, req EditRequest) string {
	t.Helper()
	res, err := ed.Do(context.Background(), req)
	if err != nil {
		fe, ok := IsError(err)
		require.True(t, ok, "server fault: %v", err)
		return "ERROR:\n" + fe.Msg
	}
	return res.Output
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func newTestEditor(t *testing.T, root string) *Editor {
	ed := NewEditor(root)
	t.Cleanup(func() { ed.Close() })
	return ed
}
