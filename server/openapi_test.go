package server

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/api"
)

// TestOpenAPI_MatchesRouter fails when gin serves a route the description
// does not list, or the description lists one gin does not serve.
func TestOpenAPI_MatchesRouter(t *testing.T) {
	var spec struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(api.OpenAPI, &spec))
	assert.Equal(t, "3.1.0", spec.OpenAPI)

	var documented []string
	for path, ops := range spec.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	param := regexp.MustCompile(`:([A-Za-z_]+)`)
	var served []string
	for _, r := range New(Options{}).engine.Routes() {
		served = append(served, r.Method+" "+param.ReplaceAllString(r.Path, "{$1}"))
	}
	slices.Sort(documented)
	slices.Sort(served)
	assert.Equal(t, served, documented, "router (expected) and openapi.json (actual) must list the same routes")
}

// TestOpenAPI_IsValidJSONWithRefsThatResolve catches typos in $ref.
func TestOpenAPI_RefsResolve(t *testing.T) {
	var doc map[string]any
	require.NoError(t, json.Unmarshal(api.OpenAPI, &doc))
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				node := any(doc)
				for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
					m, ok := node.(map[string]any)
					require.True(t, ok, "ref %s", ref)
					node, ok = m[part]
					require.True(t, ok, "ref %s does not resolve", ref)
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
}
