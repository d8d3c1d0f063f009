package server

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/executor"
)

// Output reads that carry more, and cost less.
//
// A long poll answered at the first new byte carries whatever arrived
// since the previous one: following a command that prints fast took 400 to
// 1,100 requests for 7 MB. So once output is there, an answer waits
// gatherFor for more, unless it is full or the command is done.
//
// With format=raw the answer's body is the output's bytes themselves and
// the chunk's other fields are headers: no JSON to encode or decode, which
// was most of the CPU of following bulk output.

const gatherFor = 10 * time.Millisecond

// gather waits gatherFor (or until until, if sooner) for more output to
// join an answer, unless cmd already has max bytes after off or is done.
// It does not wake at each new piece of output: a reader woken at every
// terminal read takes the CPU the terminal's reader needs.
func gather(ctx context.Context, cmd *executor.Command, off, max int64, until time.Time) {
	if info := cmd.Info(); !info.Running || info.Output.End-off >= max {
		return
	}
	timer := time.NewTimer(min(gatherFor, time.Until(until)))
	defer timer.Stop()
	select {
	case <-cmd.Done():
	case <-timer.C:
	case <-ctx.Done():
	}
}

// writeRawChunk answers an output read with format=raw.
func writeRawChunk(c *gin.Context, ch api.OutputChunk) {
	h := c.Writer.Header()
	h.Set(api.HeaderOffset, strconv.FormatInt(ch.Offset, 10))
	h.Set(api.HeaderNext, strconv.FormatInt(ch.NextOffset, 10))
	h.Set(api.HeaderLost, strconv.FormatInt(ch.Lost, 10))
	h.Set(api.HeaderDone, strconv.FormatBool(ch.Done))
	if ch.Tail != "" {
		h.Set(api.HeaderTail, strconv.QuoteToASCII(ch.Tail))
	}
	if ch.ExitCode != nil {
		h.Set(api.HeaderExitCode, strconv.Itoa(*ch.ExitCode))
	}
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.Itoa(len(ch.Data)))
	c.Status(http.StatusOK)
	_, _ = io.WriteString(c.Writer, ch.Data)
}
