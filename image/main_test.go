package image

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// testBinaryPath is a small static binary built once for the tests that
// bake one in.
var testBinaryPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "image-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	src := filepath.Join(dir, "main.go")
	bin := filepath.Join(dir, "action-server")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", bin, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GO111MODULE=off")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build a static test binary: %v\n%s", err, out)
		os.Exit(1)
	}
	testBinaryPath = bin
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
