package e2e

import (
	"encoding/json"
	"io"
	"net/http"
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

	open := map[string]bool{"/alive": true, "/server_info": true}
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
