package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelp_EveryCommandHasExamples runs --help on every command, so one
// added later without examples fails here.
func TestHelp_EveryCommandHasExamples(t *testing.T) {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk((&app{stdout: io.Discard, stderr: io.Discard}).rootCmd(), nil)
	require.Greater(t, len(paths), 20, "the tree was walked")

	for _, path := range paths {
		name := strings.Join(append([]string{"actionctl"}, path...), " ")
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			root := (&app{stdout: &out, stderr: &out}).rootCmd()
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs(append(path, "--help"))
			require.NoError(t, root.Execute())
			assert.Contains(t, out.String(), "\nExamples:\n  actionctl ", "%s --help", name)
		})
	}
}
