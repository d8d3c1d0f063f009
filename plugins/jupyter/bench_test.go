package jupyter

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/actionserver/actionserver/plugins"
)

func benchEnv(b *testing.B) plugins.Env {
	return plugins.Env{WorkDir: b.TempDir(), Environ: []string{"PATH=/usr/bin:/bin", "HOME=" + b.TempDir()},
		Logger: slog.New(slog.DiscardHandler)}
}

// BenchmarkRunCell_Warm runs 1+1 on a warm kernel.
func BenchmarkRunCell_Warm(b *testing.B) {
	p := New().(*Plugin)
	ctx := context.Background()
	if err := p.Start(ctx, benchEnv(b)); err != nil {
		b.Fatal(err)
	}
	defer p.Stop(ctx)
	b.ResetTimer()
	for range b.N {
		if _, err := p.RunCell(ctx, Cell{Code: "1+1"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStart_Cold starts the Jupyter Server and a kernel until a cell
// can run.
func BenchmarkStart_Cold(b *testing.B) {
	for range b.N {
		p := New().(*Plugin)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := p.Start(ctx, benchEnv(b)); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		p.Stop(ctx)
		cancel()
		b.StartTimer()
	}
}
