package mcp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/actionserver/actionserver/mcp"
)

func TestParseConfigs(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    []mcp.ServerConfig
		notList bool
		invalid string
	}{
		{name: "host's form", body: `[{"name":"fetch","command":"uvx","args":["mcp-server-fetch"],"env":{"A":"1"}}]`,
			want: []mcp.ServerConfig{{Name: "fetch", Command: "uvx", Args: []string{"mcp-server-fetch"}, Env: map[string]string{"A": "1"}}}},
		{name: "empty list", body: `[]`, want: []mcp.ServerConfig{}},
		{name: "defaults and trimming", body: `[{"name":" a-b_1 ","command":" node "}]`,
			want: []mcp.ServerConfig{{Name: "a-b_1", Command: "node", Args: []string{}, Env: map[string]string{}}}},
		{name: "args and env as strings", body: `[{"name":"x","command":"npx","args":"-y 'a b' \"c d\" e\\ f","env":"K=v, L=w=x"}]`,
			want: []mcp.ServerConfig{{Name: "x", Command: "npx", Args: []string{"-y", "a b", "c d", "e f"}, Env: map[string]string{"K": "v", "L": "w=x"}}}},
		{name: "the last of a name wins", body: `[{"name":"x","command":"a"},{"name":"y","command":"b"},{"name":"x","command":"c"}]`,
			want: []mcp.ServerConfig{{Name: "y", Command: "b", Args: []string{}, Env: map[string]string{}}, {Name: "x", Command: "c", Args: []string{}, Env: map[string]string{}}}},
		{name: "an object", body: `{"name":"x","command":"a"}`, notList: true},
		{name: "not JSON", body: `nope`, notList: true},
		{name: "null", body: `null`, notList: true},
		{name: "empty name", body: `[{"name":"  ","command":"a"}]`, invalid: "Server name cannot be empty"},
		{name: "bad name", body: `[{"name":"a.b","command":"a"}]`, invalid: "letters, numbers, hyphens, and underscores"},
		{name: "no name", body: `[{"command":"a"}]`, invalid: "name is required"},
		{name: "empty command", body: `[{"name":"a","command":""}]`, invalid: "Command cannot be empty"},
		{name: "command with a space", body: `[{"name":"a","command":"npx -y"}]`, invalid: "single executable"},
		{name: "entry not an object", body: `["a"]`, invalid: "not an object"},
		{name: "bad env pair", body: `[{"name":"a","command":"b","env":"NOEQUALS"}]`, invalid: "KEY=VALUE"},
		{name: "unclosed quote", body: `[{"name":"a","command":"b","args":"'x"}]`, invalid: "No closing quotation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcp.ParseConfigs([]byte(tt.body))
			switch {
			case tt.notList:
				assert.ErrorIs(t, err, mcp.ErrNotList)
			case tt.invalid != "":
				var ce *mcp.ConfigError
				require.ErrorAs(t, err, &ce)
				assert.ErrorContains(t, err, tt.invalid)
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
			}
		})
	}
}
