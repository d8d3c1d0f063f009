package server

import (
	"io"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/actionserver/actionserver/api"
)

// With format=raw an output read's body is the output's bytes themselves
// and the chunk's other fields are headers: no JSON to encode or decode,
// which was most of the CPU of following bulk output. (How a read lets
// more output join it is the executor's: Command.Poll.)

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
