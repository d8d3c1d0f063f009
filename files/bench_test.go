package files

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actionserver/actionserver/internal/asuser"
)

func benchFile(b *testing.B) string {
	b.Helper()
	var sb strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&sb, "line %d: the quick brown fox jumps over the lazy dog\n", i)
	}
	p := filepath.Join(b.TempDir(), "big.txt")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkView10000Lines(b *testing.B) {
	p := benchFile(b)
	ed := NewEditor("")
	defer ed.Close()
	ctx := context.Background()
	for b.Loop() {
		if _, err := ed.Do(ctx, EditRequest{Command: CmdView, Path: p}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStrReplace10000Lines(b *testing.B) {
	p := benchFile(b)
	ed := NewEditor("")
	defer ed.Close()
	ctx := context.Background()
	a, c := "line 5000: the quick", "line 5000: THE quick"
	for i := 0; b.Loop(); i++ {
		old, new := a, c
		if i%2 == 1 {
			old, new = c, a
		}
		if _, err := ed.Do(ctx, EditRequest{Command: CmdStrReplace, Path: p, OldStr: &old, NewStr: &new}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead10000Lines is a default read of a 570 KB text file, with the
// server's own rights and, when the benchmark runs as root, with a sandbox
// user's (see package asuser): the difference is the cost of switching.
func BenchmarkRead10000Lines(b *testing.B) {
	p := benchFile(b)
	if err := os.Chmod(filepath.Dir(filepath.Dir(p)), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	users := map[string]*asuser.User{"server": nil}
	if os.Geteuid() == 0 {
		users["sandbox-user"] = &asuser.User{UID: 65534, GID: 65534}
	}
	for name, u := range users {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				err := u.Do(func() error {
					_, err := Read(ctx, "/", p, 0, -1)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
