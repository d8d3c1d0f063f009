package files

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
