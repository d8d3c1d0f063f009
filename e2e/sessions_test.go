package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/event"
)

// waitDone long-polls a command's state until it finishes.
func waitDone(t *testing.T, c *client.Client, session string, id int64) *api.Command {
	t.Helper()
	ctx := ctxT(t)
	for {
		cmd, err := c.Command(ctx, session, id)
		require.NoError(t, err)
		if !cmd.Running {
			return cmd
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSessions_RunInParallel(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	type span struct{ start, end int64 }
	ids := make([]int64, 4)
	for i := range ids {
		sess, err := s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: fmt.Sprintf("p%d", i)})
		require.NoError(t, err)
		cmd, err := s.Client.StartCommand(ctx, sess.ID, "date +%s%N; sleep 1; date +%s%N")
		require.NoError(t, err)
		ids[i] = cmd.ID
	}
	var spans []span
	for i, id := range ids {
		session := fmt.Sprintf("p%d", i)
		cmd := waitDone(t, s.Client, session, id)
		require.NotNil(t, cmd.ExitCode)
		assert.Equal(t, 0, *cmd.ExitCode)
		out, err := s.Client.Output(ctx, session, id, 0, 0)
		require.NoError(t, err)
		f := strings.Fields(out.Data)
		require.Len(t, f, 2, out.Data)
		a, _ := strconv.ParseInt(f[0], 10, 64)
		b, _ := strconv.ParseInt(f[1], 10, 64)
		spans = append(spans, span{a, b})
	}
	// Parallel, not one after another: every command started before any
	// of them ended.
	latestStart, earliestEnd := int64(0), int64(1<<62)
	for _, sp := range spans {
		latestStart = max(latestStart, sp.start)
		earliestEnd = min(earliestEnd, sp.end)
	}
	assert.Less(t, latestStart, earliestEnd, "the four commands overlapped")

	list, err := s.Client.ListSessions(ctx)
	require.NoError(t, err)
	assert.Equal(t, "default", list[0].ID)
	assert.Len(t, list, 5)
	require.NoError(t, s.Client.DeleteSession(ctx, "p0"))
	_, err = s.Client.GetSession(ctx, "p0")
	assert.ErrorIs(t, err, client.ErrNotFound)
	assert.ErrorIs(t, s.Client.DeleteSession(ctx, "default"), client.ErrBadRequest)
}

func TestSessions_SignalKeepsSessionAndCwd(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	_, err := s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: "w", Cwd: "/tmp", Env: map[string]string{"MARK": "m1"}})
	require.NoError(t, err)
	cmd, err := s.Client.StartCommand(ctx, "w", "cd / && sleep 60")
	require.NoError(t, err)
	_, err = s.Client.StartCommand(ctx, "w", "echo busy")
	assert.ErrorIs(t, err, client.ErrBusy)
	assert.NotErrorIs(t, err, client.ErrExists)
	// The same status, another error: the code tells them apart.
	_, err = s.Client.CreateSession(ctx, api.CreateSessionRequest{ID: "w"})
	assert.ErrorIs(t, err, client.ErrExists)
	assert.NotErrorIs(t, err, client.ErrBusy)

	time.Sleep(200 * time.Millisecond)
	require.NoError(t, s.Client.Signal(ctx, "w", "SIGTERM"))
	done := waitDone(t, s.Client, "w", cmd.ID)
	assert.Equal(t, 143, *done.ExitCode)
	assert.False(t, done.ShellDied)

	cmd, err = s.Client.StartCommand(ctx, "w", `echo "$PWD $MARK"`)
	require.NoError(t, err)
	waitDone(t, s.Client, "w", cmd.ID)
	out, err := s.Client.Output(ctx, "w", cmd.ID, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, "/ m1\n", out.Data, "cwd and environment survive the signal")

	require.NoError(t, s.Client.Resize(ctx, "w", 30, 99))
	cmd, err = s.Client.StartCommand(ctx, "w", "tput cols")
	require.NoError(t, err)
	waitDone(t, s.Client, "w", cmd.ID)
	out, err = s.Client.Output(ctx, "w", cmd.ID, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, "99\n", out.Data)
}

func TestSessions_InputAndLongPoll(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	cmd, err := s.Client.StartCommand(ctx, "default", `read -p "Name: " n; echo "hi $n"`)
	require.NoError(t, err)
	var ch *api.OutputChunk
	require.Eventually(t, func() bool {
		ch, err = s.Client.Output(ctx, "default", cmd.ID, 0, 500*time.Millisecond)
		return err == nil && ch.Tail == "Name: "
	}, 10*time.Second, 10*time.Millisecond, "the prompt shows as the tail")
	require.NoError(t, s.Client.SendInput(ctx, "default", "Bo", true))
	// A long poll returns as soon as output arrives.
	ch, err = s.Client.Output(ctx, "default", cmd.ID, 0, 10*time.Second)
	require.NoError(t, err)
	assert.NotEmpty(t, ch.Data)
	waitDone(t, s.Client, "default", cmd.ID)
	ch, err = s.Client.Output(ctx, "default", cmd.ID, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, "Name: Bo\nhi Bo\n", ch.Data)
	assert.True(t, ch.Done)
	require.NotNil(t, ch.ExitCode)
	assert.Equal(t, 0, *ch.ExitCode)
}

// cuttingProxy forwards to target but cuts the first connection after
// limit bytes from the server, as a flaky network would.
func cuttingProxy(t *testing.T, target string, limit int64) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	var once sync.Once
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			cut := false
			once.Do(func() { cut = true })
			go func() { io.Copy(out, in); out.Close() }()
			go func() {
				if cut {
					io.CopyN(in, out, limit)
				} else {
					io.Copy(in, out)
				}
				in.Close()
				out.Close()
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

func TestStream_ResumesAfterDroppedConnectionExactlyOnce(t *testing.T) {
	// The buffer holds the whole output, so however slow this reader is,
	// nothing may be dropped.
	ws := t.TempDir()
	s := startServer(t, startOpts{workDir: ws, args: []string{"--working-dir", ws, "--no-enable-browser", "--output-buffer", "64M"}})
	ctx := ctxT(t)
	// 20 MB of text whose checksum is known.
	data := filepath.Join(t.TempDir(), "data")
	out, err := exec.Command("sh", "-c", "head -c 15000000 /dev/urandom | base64 -w 76 > "+data).CombinedOutput()
	require.NoError(t, err, string(out))
	want, err := os.ReadFile(data)
	require.NoError(t, err)
	require.Greater(t, len(want), 20_000_000)
	require.NoError(t, os.Chmod(filepath.Dir(data), 0o755))

	cmd, err := s.Client.StartCommand(ctx, "default", "cat "+data)
	require.NoError(t, err)

	proxied := client.New(cuttingProxy(t, strings.TrimPrefix(s.URL, "http://"), 3_000_000))
	h := sha256.New()
	reconnects, lost := 0, int64(0)
	next := int64(0)
	for ev := range proxied.Stream(ctx, "default", cmd.ID, client.StreamOptions{}) {
		switch ev.Kind {
		case "output":
			require.Equal(t, next, ev.Offset, "no gap, no overlap")
			h.Write([]byte(ev.Data))
			next = ev.Next
		case "reconnect":
			reconnects++
		case "lost":
			lost += ev.Lost
		case "exit":
			require.NoError(t, ev.Err)
			assert.Equal(t, 0, *ev.Command.ExitCode)
		}
	}
	sum := sha256.Sum256(want)
	assert.Equal(t, hex.EncodeToString(sum[:]), hex.EncodeToString(h.Sum(nil)), "every byte exactly once")
	assert.GreaterOrEqual(t, reconnects, 1, "the proxy cut the first connection")
	assert.Zero(t, lost)
}

func TestStream_ReportsDroppedOutput(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	cmd, err := s.Client.StartCommand(ctx, "default", "yes 0123456789abcdef | head -c 10000000")
	require.NoError(t, err)
	waitDone(t, s.Client, "default", cmd.ID)
	ch, err := s.Client.Output(ctx, "default", cmd.ID, 0, 0)
	require.NoError(t, err)
	info, err := s.Client.Command(ctx, "default", cmd.ID)
	require.NoError(t, err)
	assert.Positive(t, ch.Lost, "the 8 MiB buffer dropped the oldest bytes")
	assert.Equal(t, info.Output.Start, ch.Lost, "lost is exactly what was dropped")
	assert.Equal(t, ch.Lost, ch.Offset)

	var lost int64
	for ev := range s.Client.Stream(ctx, "default", cmd.ID, client.StreamOptions{}) {
		if ev.Kind == "lost" {
			lost = ev.Lost
		}
	}
	assert.Equal(t, info.Output.Start, lost, "the stream says how much was lost, too")
}

func TestStream_StalledReaderDoesNotHoldUpOthers(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	cmd, err := s.Client.StartCommand(ctx, "default", "seq 1 1500000")
	require.NoError(t, err)

	// A reader that connects and then never reads.
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/sessions/default/commands/%d/stream", s.URL, cmd.ID), nil)
	stalled, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer stalled.Body.Close()

	var got int64
	for ev := range s.Client.Stream(ctx, "default", cmd.ID, client.StreamOptions{}) {
		if ev.Kind == "output" {
			got = ev.Next
		}
		if ev.Kind == "exit" {
			assert.Equal(t, 0, *ev.Command.ExitCode)
		}
	}
	info, err := s.Client.Command(ctx, "default", cmd.ID)
	require.NoError(t, err)
	assert.False(t, info.Running, "the command finished with a reader stalled")
	assert.Equal(t, info.Output.End, got, "the other reader got everything")
}

func TestActionctl_Sessions(t *testing.T) {
	s := startServer(t, startOpts{})
	ctl := func(args ...string) (string, int) {
		cmd := exec.Command(filepath.Join(binDir, "actionctl"), append([]string{"--url", s.URL}, args...)...)
		out, err := cmd.Output()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return string(out), exitErr.ExitCode()
		}
		return string(out), 0
	}
	out, code := ctl("session", "new", "--id", "cli", "--env", "X=42")
	require.Equal(t, 0, code)
	assert.Equal(t, "cli\n", out)
	out, _ = ctl("session", "ls")
	assert.Contains(t, out, "cli")
	out, code = ctl("exec", "--follow", "--session", "cli", "echo $X; exit 3")
	assert.Equal(t, "42\nexit\n", out)
	assert.Equal(t, 3, code, "the remote exit code")
	_, code = ctl("session", "rm", "cli")
	assert.Equal(t, 0, code)
	_, code = ctl("session", "rm", "cli")
	assert.Equal(t, 1, code)

	// Ctrl-C on a following actionctl interrupts the remote command.
	follow := exec.Command(filepath.Join(binDir, "actionctl"), "--url", s.URL, "exec", "--follow", "echo started; sleep 60")
	stdout, err := follow.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, follow.Start())
	buf := make([]byte, 64)
	n, _ := stdout.Read(buf)
	assert.Equal(t, "started\n", string(buf[:n]))
	require.NoError(t, follow.Process.Signal(os.Interrupt))
	err = follow.Wait()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	assert.Equal(t, 130, exitErr.ExitCode(), "sleep ended by SIGINT")
}

func TestAttach_TypesIntoTheShell(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx, cancel := context.WithTimeout(ctxT(t), 20*time.Second)
	defer cancel()
	conn, err := s.Client.Attach(ctx, "default")
	require.NoError(t, err)
	defer conn.CloseNow()
	require.NoError(t, conn.Write(ctx, 2 /* binary */, []byte("echo at-$((6*7))\n")))
	var seen strings.Builder
	for !strings.Contains(seen.String(), "at-42") {
		_, data, err := conn.Read(ctx)
		require.NoError(t, err, "output so far: %q", seen.String())
		seen.Write(data)
	}
	// What a person types stays out of the agent's observations. The
	// typed command has printed its output but its prompt may still be
	// on the way; until then the shell refuses the agent's command
	// without running it.
	var obs *event.CmdOutput
	require.Eventually(t, func() bool {
		obs, err = s.Client.Run(ctx, "echo agent", client.RunOptions{})
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "the shell stays busy after the typed command: %v", err)
	assert.Equal(t, "agent", obs.Content, "%+v", obs.Metadata)
}
