package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
	"github.com/actionserver/actionserver/event"
)

// routeFuzzOps is how many random requests each server gets: a count
// budget, so the test takes the same work on any machine.
const routeFuzzOps = 400

// TestFileRoutes_RandomPathsReachNothingForbidden sends every file route
// (read, view, write, edit, upload_file, download_files, list_files, the
// file viewer and the native byte-level /files routes) random paths built of "..", ".", NUL bytes, over-long names,
// the links an agent planted and absolute jumps, with a fixed seed. The
// invariant: nothing the sandbox user could not reach is read (no answer
// carries the secret) or written (the forbidden files and directories are
// as they were), and the server stays up.
func TestFileRoutes_RandomPathsReachNothingForbidden(t *testing.T) {
	for _, mode := range []struct {
		name  string
		start func(t *testing.T, env []string) (*server, string)
	}{
		{"root with a sandbox user", func(t *testing.T, env []string) (*server, string) {
			return startAsSandboxUserEnv(t, env, "--enable-browser")
		}},
		{"non-root", func(t *testing.T, env []string) (*server, string) {
			return startFilesAsNonRoot(t, env, "--enable-browser")
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			f := makeForbidden(t)
			// Where a non-root server may write its viewer's address.
			urlDir := t.TempDir()
			require.NoError(t, os.Chmod(filepath.Dir(urlDir), 0o755))
			require.NoError(t, os.Chmod(urlDir, 0o777))
			urlFile := filepath.Join(urlDir, "server-url")
			s, ws := mode.start(t, []string{"FILE_VIEWER_URL_FILE=" + urlFile})
			f.plant(t, ws)
			require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub/deeper"), 0o777))
			require.NoError(t, os.Chmod(filepath.Join(ws, "sub"), 0o777))
			require.NoError(t, os.Chmod(filepath.Join(ws, "sub/deeper"), 0o777))
			var viewer string
			require.Eventually(t, func() bool {
				b, err := os.ReadFile(urlFile)
				viewer = string(b)
				return err == nil && viewer != ""
			}, 30*time.Second, 20*time.Millisecond)

			rng := rand.New(rand.NewPCG(30, 2026))
			fz := routeFuzzer{t: t, s: s, ws: ws, f: f, viewer: viewer, rng: rng}
			for i := range routeFuzzOps {
				fz.one(i)
			}
			f.untouched(t)
			require.NoError(t, s.Client.Alive(ctxT(t)), "the server is still up")
			for _, name := range []string{"a.png", "private", "inside.txt", "sub", "new-0.txt", "new-1.txt", "new-2.txt", "new-3.txt", "new-4.txt"} {
				_, err := os.Lstat(filepath.Join(os.TempDir(), name))
				assert.ErrorIs(t, err, os.ErrNotExist, "the test wrote %s in the machine's temporary directory", name)
			}
		})
	}
}

type routeFuzzer struct {
	t      *testing.T
	s      *server
	ws     string
	f      forbidden
	viewer string
	rng    *rand.Rand
}

// component returns one random path component.
func (z *routeFuzzer) component() string {
	switch z.rng.IntN(12) {
	case 0, 1:
		return ".."
	case 2:
		return "."
	case 3:
		return "a.png"
	case 4:
		return "private"
	case 5:
		return "inside.txt"
	case 6:
		return "sub"
	case 7:
		return "x\x00y"
	case 8:
		return strings.Repeat("L", 200+z.rng.IntN(200))
	case 9:
		return "new-" + fmt.Sprint(z.rng.IntN(5)) + ".txt"
	case 10:
		return "ü€-" + fmt.Sprint(z.rng.IntN(3)) + ".png"
	}
	return ""
}

// path returns a random path: relative, under the workspace, or absolute
// elsewhere (the forbidden places included). It climbs at most one level
// (one ".."), so that it stays in the test's directories, which the
// sandbox user cannot write, and never reaches /tmp itself, which it can.
func (z *routeFuzzer) path() string {
	var b strings.Builder
	climbed := false
	switch z.rng.IntN(5) {
	case 0:
	case 1:
		b.WriteString(filepath.Dir(z.f.file))
	case 2:
		b.WriteString(z.f.dir)
	default:
		b.WriteString(z.ws)
	}
	for range 1 + z.rng.IntN(5) {
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		c := z.component()
		if c == ".." {
			if climbed {
				c = "."
			}
			climbed = true
		}
		b.WriteString(c)
	}
	return b.String()
}

// one sends one random request and checks its answer leaks nothing.
func (z *routeFuzzer) one(i int) {
	t := z.t
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := z.path()
	var answer string
	route := z.rng.IntN(17)
	switch route {
	case 0:
		obs, err := z.s.Client.Execute(ctx, event.NewFileRead(p))
		answer = textOf(obs, err)
	case 1:
		a := event.NewFileRead(p)
		a.ImplSource = event.ImplOHACI
		obs, err := z.s.Client.Execute(ctx, a)
		answer = textOf(obs, err)
	case 2:
		obs, err := z.s.Client.Execute(ctx, event.NewFileWrite(p, "fuzz"))
		answer = textOf(obs, err)
	case 3, 4:
		cmds := []string{"create", "str_replace", "insert", "view", "undo_edit"}
		e := event.NewFileEdit(cmds[z.rng.IntN(len(cmds))], p)
		e.FileText, e.OldStr, e.NewStr = strPtr("fuzz"), strPtr("SECRET-"), strPtr("fuzz")
		if e.Command == "insert" {
			e.OldStr, e.InsertLine = nil, &event.InsertLine{Raw: "0"}
		}
		obs, err := z.s.Client.Execute(ctx, e)
		answer = textOf(obs, err)
	case 5:
		_, out := postUpload(t, z.s, z.component(), []byte("fuzz"), p, "false")
		answer = fmt.Sprint(out)
	case 6:
		_, out := postUpload(t, z.s, "t.zip", zipOf(t, map[string]string{z.component() + "/f.txt": "fuzz"}), p, "true")
		answer = fmt.Sprint(out)
	case 7:
		var buf bytes.Buffer
		_, err := z.s.Client.Download(ctx, p, &buf, nil)
		answer = textOf(nil, err)
		if err == nil && buf.Len() > 0 {
			for name, body := range unzip(t, buf.Bytes()) {
				answer += name + body
			}
		}
	case 8:
		names, err := z.s.Client.ListFiles(ctx, p)
		answer = strings.Join(names, "\n") + textOf(nil, err)
	case 11:
		fr, err := z.s.Client.OpenFile(ctx, p, 0)
		if err == nil {
			b, _ := io.ReadAll(fr)
			fr.Close()
			answer = string(b)
		}
		answer += textOf(nil, err)
	case 12:
		_, err := z.s.Client.WriteFile(ctx, p, strings.NewReader("fuzz"), client.WriteFileOptions{NoParents: z.rng.IntN(2) == 0})
		answer = textOf(nil, err)
	case 13:
		info, err := z.s.Client.StatFile(ctx, p)
		answer = fmt.Sprint(info) + textOf(nil, err)
		list, err := z.s.Client.ListDir(ctx, p)
		answer += fmt.Sprint(list) + textOf(nil, err)
	case 14:
		err := z.s.Client.Mkdir(ctx, p, "", z.rng.IntN(2) == 0)
		answer = textOf(nil, err)
	case 15:
		err := z.s.Client.Move(ctx, z.path(), p, z.rng.IntN(2) == 0)
		answer = textOf(nil, err)
		err = z.s.Client.Chmod(ctx, p, "0777")
		answer += textOf(nil, err)
	case 16:
		err := z.s.Client.Remove(ctx, p, z.rng.IntN(2) == 0)
		answer = textOf(nil, err)
	default:
		resp, err := http.Get(z.viewer + "/view?path=" + url.QueryEscape(p))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answer = string(b)
		}
	}
	assert.NotContains(t, answer, z.f.marker, "op %d route %d path %q leaked the secret", i, route, p)
	// The viewer embeds files as base64; the secret files start with
	// "SECRET".
	assert.NotContains(t, answer, "U0VDUkVU", "op %d route %d path %q leaked the secret (base64)", i, route, p)
}

// textOf is what an answer shows: an observation's text or an error's.
func textOf(obs event.Observation, err error) string {
	var s string
	if obs != nil {
		b, _ := json.Marshal(obs)
		s = string(b)
	}
	if err != nil {
		s += err.Error()
	}
	return s
}
