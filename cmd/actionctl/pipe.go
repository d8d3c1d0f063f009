package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/actionserver/actionserver/client"
)

// followRaw prints a command's output as raw long-poll reads deliver it,
// until the command is done: the cheapest way to follow bulk output (no
// JSON, large reads). A dropped connection is retried from the last
// offset, as Stream does.
func (a *app) followRaw(ctx context.Context, cl *client.Client, session string, id int64, interrupted *atomic.Bool) error {
	var buf []byte
	off := int64(0)
	delay := 20 * time.Millisecond
	for {
		ch, err := cl.OutputRaw(ctx, session, id, off, 30*time.Second, 0, buf[:0])
		if err != nil {
			if interrupted.Load() {
				return errInterrupted
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var apiErr *client.Error
			if errors.As(err, &apiErr) && !apiErr.Temporary() {
				return err
			}
			fmt.Fprintf(a.stderr, "actionctl: connection lost (%v); resuming at byte %d\n", err, off)
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return ctx.Err()
			}
			delay = min(2*delay, 2*time.Second)
			continue
		}
		delay = 20 * time.Millisecond
		buf = ch.Data
		if ch.Lost > 0 {
			fmt.Fprintf(a.stderr, "actionctl: %d bytes of output were dropped by the server\n", ch.Lost)
		}
		if _, err := a.stdout.Write(ch.Data); err != nil {
			return err
		}
		off = ch.NextOffset
		if ch.Done {
			if ch.ExitCode != nil {
				a.code = exitCode(*ch.ExitCode)
			}
			return nil
		}
	}
}
