package shell

import (
	"context"
	"os"
	"testing"
	"time"
)

// BenchmarkStartPipe_Seq measures `seq 1 1000000` in pipe mode, every
// byte read back in process.
func BenchmarkStartPipe_Seq(b *testing.B) {
	s, err := Start(context.Background(), Options{Dir: b.TempDir(),
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir(), "TERM=xterm-256color"}})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.Close(ctx)
	}()
	b.SetBytes(6888896)
	for b.Loop() {
		c, err := s.StartPipe(context.Background(), "seq 1 1000000", PipeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		off := int64(0)
		for {
			changed := c.Changed()
			ch := c.Read(off, 1<<20)
			off = ch.Next
			if ch.Done {
				break
			}
			if len(ch.Data) == 0 {
				<-changed
			}
		}
		if off != 6888896 {
			b.Fatalf("read %d bytes", off)
		}
	}
}
