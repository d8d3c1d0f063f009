package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/client"
)

// TestAPIKey_EveryRouteInTheSpecRefusesWithoutIt walks the server's own
// OpenAPI description, so a route added later is covered without editing
// this test.
func TestAPIKey_EveryRouteInTheSpecRefusesWithoutIt(t *testing.T) {
	const key = "walk-every-route-key"
	s := startServer(t, startOpts{apiKey: key})
	req, err := http.NewRequest(http.MethodGet, s.URL+"/openapi.json", nil)
	require.NoError(t, err)
	req.Header.Set(client.APIKeyHeader, key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var spec struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&spec))
	resp.Body.Close()
	require.NotEmpty(t, spec.Paths)

	open := map[string]bool{"/alive": true, "/server_info": true, "/livez": true, "/readyz": true}
	walked := 0
	for path, ops := range spec.Paths {
		concrete := strings.NewReplacer("{id}", "default", "{cid}", "1").Replace(path)
		for method := range ops {
			if method == "parameters" {
				continue
			}
			for _, header := range []string{"", "wrong-" + key} {
				req, err := http.NewRequest(strings.ToUpper(method), s.URL+concrete, strings.NewReader("{}"))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				if header != "" {
					req.Header.Set(client.APIKeyHeader, header)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err, "%s %s", method, path)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if open[path] {
					assert.NotEqual(t, http.StatusForbidden, resp.StatusCode, "%s %s is open", method, path)
					continue
				}
				assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s %s with key %q", method, path, header)
				assert.JSONEq(t, `{"detail": "Invalid API Key"}`, string(body), "%s %s", method, path)
				walked++
			}
		}
	}
	assert.Greater(t, walked, 30, "the spec lists the routes")
}

// TestAPIKey_NeverLeaks checks that the key reaches neither the agent's
// shell nor the logs.
func TestAPIKey_NeverLeaks(t *testing.T) {
	const key = "never-leak-this-key-4711"
	s := startServer(t, startOpts{apiKey: key, args: []string{"--working-dir", t.TempDir(), "--no-enable-browser"}})
	c := client.New(s.URL, client.WithAPIKey(key))
	obs, err := c.Run(ctxT(t), "env; cat /proc/$$/environ | tr '\\0' '\\n'", client.RunOptions{})
	require.NoError(t, err)
	assert.NotContains(t, obs.Content, key)
	assert.NotContains(t, obs.Content, "SESSION_API_KEY")
	// Refused requests are logged without their headers.
	bad := client.New(s.URL, client.WithAPIKey("wrong-"+key))
	_, err = bad.Run(ctxT(t), "true", client.RunOptions{})
	require.Error(t, err)
	s.stop()
	assert.NotContains(t, s.logs.String(), key)
}

// repeatByte is an endless stream of one byte, so a huge request body
// costs no memory in the test.
type repeatByte byte

func (r repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// TestBodyLimit_ActionsAreBoundedUploadsAreNot sends an action just over
// the body limit, which the server refuses before reading it all into
// memory, and then uploads more than that, which streams.
func TestBodyLimit_ActionsAreBoundedUploadsAreNot(t *testing.T) {
	s := startServer(t, startOpts{})
	ctx := ctxT(t)
	const limit = 64 << 20 // the binary's request body limit (server.Options.MaxBodyBytes)

	for _, tc := range []struct {
		name   string
		size   int64 // bytes of file content
		status int
	}{
		{"just under the limit", limit - 1<<10, http.StatusOK},
		{"just over the limit", limit + 1, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A valid action: write tc.size bytes to a file.
			dest := filepath.Join(s.WorkDir, "written.txt")
			body := io.MultiReader(strings.NewReader(`{"action": {"action": "write", "args": {"path": "`+dest+`", "content": "`),
				io.LimitReader(repeatByte('x'), tc.size), strings.NewReader(`"}}}`))
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/execute_action", body)
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			if tc.status != http.StatusRequestEntityTooLarge {
				fi, err := os.Stat(dest)
				require.NoError(t, err)
				assert.GreaterOrEqual(t, fi.Size(), tc.size, "the whole content arrived")
				return
			}
			var got struct {
				Detail string `json:"detail"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
			assert.Equal(t, fmt.Sprintf("Request body exceeds %d bytes", limit), got.Detail)
		})
	}

	// The server goes on, and an upload larger than the limit streams.
	obs, err := s.Client.Run(ctx, "echo after", client.RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, "after", obs.Content)
	const uploadSize = limit + 1<<20
	require.NoError(t, s.Client.UploadReader(ctx, "big.bin", io.LimitReader(repeatByte('u'), uploadSize), s.WorkDir, false))
	fi, err := os.Stat(filepath.Join(s.WorkDir, "big.bin"))
	require.NoError(t, err)
	assert.EqualValues(t, uploadSize, fi.Size())
}
