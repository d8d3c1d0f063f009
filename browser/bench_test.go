package browser

import (
	"context"
	"testing"
	"time"
)

// BenchmarkBrowse_WarmLocalPage measures a browse of a loopback page with
// Chromium already running (target: p50 <= 150 ms).
func BenchmarkBrowse_WarmLocalPage(b *testing.B) {
	base := serveB(b)
	br := New(Options{WorkDir: b.TempDir(), Logger: quietLogger()})
	b.Cleanup(func() { br.Close() })
	ctx := context.Background()
	if _, err := br.Browse(ctx, base+"/links.html", false); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		obs, err := br.Browse(ctx, base+"/form.html", false)
		if err != nil || obs.Error {
			b.Fatal(err, obs.LastBrowserActionError)
		}
	}
}

// BenchmarkBrowse_ColdStart measures from a new Browser to its first
// observation, Chromium start included (target: <= 2 s).
func BenchmarkBrowse_ColdStart(b *testing.B) {
	base := serveB(b)
	dir := b.TempDir()
	for b.Loop() {
		br := New(Options{WorkDir: dir, Logger: quietLogger()})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		obs, err := br.Browse(ctx, base+"/links.html", false)
		cancel()
		if err != nil || obs.Error {
			b.Fatal(err, obs.LastBrowserActionError)
		}
		b.StopTimer()
		br.Close()
		b.StartTimer()
	}
}

func serveB(b *testing.B) string { return serveTB(b) }
