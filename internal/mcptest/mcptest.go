// Package mcptest finds the real MCP servers the tests run, which
// scripts/deps.sh installs from the npm registry into .deps/mcp-servers.
package mcptest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Dir is where scripts/deps.sh installs the servers, relative to the
// module root.
const Dir = ".deps/mcp-servers"

// Server is how to start one MCP server.
type Server struct {
	Command string
	Args    []string
}

// Everything returns the reference "everything" server
// (@modelcontextprotocol/server-everything): echo, get-sum, get-env,
// trigger-long-running-operation, prompts.
func Everything(t testing.TB) Server {
	s, err := Lookup("server-everything", "stdio")
	if err != nil {
		missing(t, err.Error())
	}
	return s
}

// Filesystem returns the reference filesystem server
// (@modelcontextprotocol/server-filesystem) allowed into dir.
func Filesystem(t testing.TB, dir string) Server {
	s, err := Lookup("server-filesystem", dir)
	if err != nil {
		missing(t, err.Error())
	}
	return s
}

// Lookup returns how to run the installed @modelcontextprotocol/<pkg> with
// args, or why it cannot be run.
func Lookup(pkg string, args ...string) (Server, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return Server{}, errors.New("node is not installed")
	}
	root, err := moduleRoot()
	if err != nil {
		return Server{}, fmt.Errorf("find module root: %w", err)
	}
	p := filepath.Join(root, Dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(p); err != nil {
		return Server{}, fmt.Errorf("@modelcontextprotocol/%s is not installed (run scripts/deps.sh)", pkg)
	}
	return Server{Command: node, Args: append([]string{p}, args...)}, nil
}

// missing skips the test, unless it runs in CI, where what the tests need
// must be there.
func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true, so this fails rather than skips", why)
	}
	t.Skip(why)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
