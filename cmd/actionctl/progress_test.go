package main

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProgress_ShownOnlyForLargeTransfers(t *testing.T) {
	tests := []struct {
		name    string
		total   int64
		updates []int64
		err     error
		want    []string // substrings of the output; nil: no output at all
	}{
		{"small upload", 3 << 20, []int64{1 << 20, 3 << 20}, nil, nil},
		{"large upload", 8 << 20, []int64{1 << 20, 5 << 20, 8 << 20}, nil, []string{"upload big", "100%", "8.4/8.4 MB"}},
		{"large download of unknown size", 0, []int64{6 << 20}, nil, []string{"download out", "6.3 MB"}},
		{"failed transfer stops where it was", 64 << 20, []int64{5 << 20}, errors.New("reset"), []string{"upload big", "(5.2/67 MB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			label := "upload big"
			if tt.total == 0 {
				label = "download out"
			}
			p := newProgressTo(&out, label, tt.total)
			for _, n := range tt.updates {
				p.update(n)
			}
			p.done(tt.err)
			if tt.want == nil {
				assert.Empty(t, out.String())
				return
			}
			for _, w := range tt.want {
				assert.Contains(t, out.String(), w)
			}
			assert.True(t, bytes.HasSuffix(out.Bytes(), []byte("\n")), "the line is ended: %q", out.String())
		})
	}
}

func TestProgress_NothingOffATerminal(t *testing.T) {
	var out bytes.Buffer
	p := (&app{stderr: &out}).newProgress("upload big", 64<<20)
	p.update(32 << 20)
	p.done(nil)
	assert.Empty(t, out.String())
}
