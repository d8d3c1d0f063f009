package server

import (
	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/executor"
)

// The executor's plain values on the native API's wire: one file, so a
// change on either side is one change here (as errors.go is for errors).

// outputChunk is an output read as GET .../output answers it.
func outputChunk(ch executor.OutputChunk) api.OutputChunk {
	return api.OutputChunk{Offset: ch.Offset, NextOffset: ch.NextOffset, Lost: ch.Lost, Data: ch.Data,
		Tail: ch.Tail, Done: ch.Done, ExitCode: ch.ExitCode}
}
