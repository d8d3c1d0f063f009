package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deps lists the packages a main package links, its own path left out.
func deps(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-tags", "nomsgpack", "-deps",
		"-f", "{{if ne .Name \"main\"}}{{.ImportPath}}{{end}}", pkg).Output()
	require.NoError(t, err, "go list %s", pkg)
	set := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		set[p] = true
	}
	return set
}

// TestLinksWhatTheServerLinks keeps the floor honest: every package
// action-server links must initialise here too, or the floor would start
// faster for leaving work out.
func TestLinksWhatTheServerLinks(t *testing.T) {
	server := deps(t, "github.com/actionserver/actionserver/cmd/action-server")
	floor := deps(t, "github.com/actionserver/actionserver/bench/cmd/startfloor")
	require.NotEmpty(t, server)
	var missing []string
	for p := range server {
		if !floor[p] {
			missing = append(missing, p)
		}
	}
	assert.Empty(t, missing, "packages action-server links that startfloor does not")
}
