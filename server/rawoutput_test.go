package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/executor"
	"github.com/actionserver/actionserver/shell"
)

// newRawTestServer serves a ready server whose commands keep outputLimit
// bytes of output.
func newRawTestServer(t *testing.T, outputLimit int) *client.Client {
	cl, _ := newRawTestServerURL(t, outputLimit)
	return cl
}

// newRawTestServerURL is newRawTestServer, with the server's URL.
func newRawTestServerURL(t *testing.T, outputLimit int) (*client.Client, string) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := New(Options{IdleTrim: -1, Logger: log})
	e, err := executor.New(context.Background(), executor.Options{
		WorkDir: t.TempDir(),
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()},
		Shell:   shell.Options{OutputLimit: outputLimit},
		Logger:  log,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		e.Close(ctx)
	})
	s.SetReady(e)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return client.New(srv.URL), srv.URL
}

func TestOutputRaw_EveryByteOnce(t *testing.T) {
	cl := newRawTestServer(t, 0)
	ctx := context.Background()
	want, err := exec.Command("seq", "1", "500000").Output()
	require.NoError(t, err)

	cases := []struct {
		name  string
		start func() (*api.Command, error)
		want  string
	}{
		{"piped", func() (*api.Command, error) {
			return cl.StartPipe(ctx, "default", "seq 1 500000; exit 4", client.PipeOptions{})
		}, string(want)},
		{"terminal", func() (*api.Command, error) {
			return cl.StartCommand(ctx, "default", "seq 1 500000; (exit 4)")
		}, string(want)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd, err := tc.start()
			require.NoError(t, err)
			var got []byte
			off, requests := int64(0), 0
			for {
				ch, err := cl.OutputRaw(ctx, "default", cmd.ID, off, 20*time.Second, 0, got)
				require.NoError(t, err)
				requests++
				require.Zero(t, ch.Lost)
				require.Equal(t, off, ch.Offset)
				got = ch.Data
				off = ch.NextOffset
				require.EqualValues(t, len(got), off)
				if ch.Done {
					require.NotNil(t, ch.ExitCode)
					assert.Equal(t, 4, *ch.ExitCode)
					break
				}
				require.Nil(t, ch.ExitCode)
			}
			// The terminal's output is its screen's lines: the same text.
			assert.True(t, strings.TrimRight(tc.want, "\n") == strings.TrimRight(string(got), "\n"),
				"%d bytes read, %d printed", len(got), len(tc.want))
			t.Logf("%d requests", requests) // the benchmarks measure how few
		})
	}
}

func TestOutputRaw_ReportsDroppedBytes(t *testing.T) {
	cl := newRawTestServer(t, 4096)
	ctx := context.Background()
	cmd, err := cl.StartPipe(ctx, "default", "seq 1 100000", client.PipeOptions{})
	require.NoError(t, err)
	for {
		st, err := cl.Command(ctx, "default", cmd.ID)
		require.NoError(t, err)
		if !st.Running {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	ch, err := cl.OutputRaw(ctx, "default", cmd.ID, 0, 0, 0, nil)
	require.NoError(t, err)
	assert.True(t, ch.Done)
	assert.Equal(t, ch.Lost, ch.Offset, "everything before the kept bytes was dropped")
	assert.Positive(t, ch.Lost)
	assert.LessOrEqual(t, len(ch.Data), 4096)
	assert.True(t, strings.HasSuffix(string(ch.Data), "\n100000\n"))
}

// TestOutput_TheRawReadGivesTheJSONAnswer: the client's Output reads the
// raw form; what it returns is what the JSON answer of the same read says.
func TestOutput_TheRawReadGivesTheJSONAnswer(t *testing.T) {
	cl, url := newRawTestServerURL(t, 4096)
	ctx := context.Background()
	jsonRead := func(session string, id, off int64) api.OutputChunk {
		resp, err := http.Get(fmt.Sprintf("%s/sessions/%s/commands/%d/output?offset=%d", url, session, id, off))
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var ch api.OutputChunk
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&ch))
		return ch
	}
	_, err := cl.CreateSession(ctx, api.CreateSessionRequest{ID: "tail"})
	require.NoError(t, err)
	running, err := cl.StartCommand(ctx, "tail", `printf 'one\ntwo "quoted" \303\251'; sleep 30`)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Signal(ctx, "tail", "SIGKILL") })
	dropped, err := cl.StartPipe(ctx, "default", "seq 1 100000; exit 3", client.PipeOptions{})
	require.NoError(t, err)
	for {
		st, err := cl.Command(ctx, "default", dropped.ID)
		require.NoError(t, err)
		if !st.Running {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The running command's tail appears once the terminal has drawn it.
	require.Eventually(t, func() bool {
		ch, err := cl.Output(ctx, "tail", running.ID, 0, 0)
		return err == nil && ch.Tail != ""
	}, 20*time.Second, 20*time.Millisecond)

	tests := []struct {
		name    string
		session string
		id, off int64
	}{
		{"running, with a tail", "tail", running.ID, 0},
		{"done, with an exit code and lost bytes", "default", dropped.ID, 0},
		{"done, read from the middle", "default", dropped.ID, 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cl.Output(ctx, tt.session, tt.id, tt.off, 0)
			require.NoError(t, err)
			assert.Equal(t, jsonRead(tt.session, tt.id, tt.off), *got)
		})
	}
	_, err = cl.Output(ctx, "default", 999, 0, 0)
	assert.ErrorIs(t, err, client.ErrNotFound, "a refused raw read is an Error as any other")
}
