package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/actionserver/actionserver/api"
	"github.com/actionserver/actionserver/client"
)

// The MCP commands speak MCP to the server's proxy with the official Go
// SDK's SSE client, as the host's MCP client does. They live here rather
// than in client/, which speaks only the server's own wire format and
// imports nothing but the standard library and our wire types.

func (a *app) mcpCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "mcp",
		Short: "List and call the tools of the stdio MCP servers behind the server's /mcp/sse",
		Long: `The host configures stdio MCP servers with POST /update_mcp_server; the
server runs them and offers their tools at /mcp/sse. These commands talk
to that endpoint as the host's MCP client does, for debugging.`,
		Example: `  actionctl mcp tools
  actionctl mcp call echo '{"message": "hi"}'`,
	}
	c.AddCommand(a.mcpToolsCmd(), a.mcpCallCmd())
	return c
}

func (a *app) mcpToolsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "tools",
		Short: "List the tools the MCP proxy offers",
		Long: `Lists each tool's name and the first line of its description; --json
prints the tools as MCP describes them (with their input schemas).`,
		Example: `  actionctl mcp tools
  actionctl --json mcp tools | jq -r '.[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			session, err := a.mcpSession(cmd.Context())
			if err != nil {
				return err
			}
			defer session.Close()
			tools := []*sdk.Tool{}
			for t, err := range session.Tools(cmd.Context(), nil) {
				if err != nil {
					return fmt.Errorf("list MCP tools: %w", err)
				}
				tools = append(tools, t)
			}
			if a.json {
				return a.printJSON(tools)
			}
			for _, t := range tools {
				desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
				fmt.Fprintf(a.stdout, "%-40s %s\n", t.Name, desc)
			}
			return nil
		},
	}
}

func (a *app) mcpCallCmd() *cobra.Command {
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "call NAME [JSON]",
		Short: "Call an MCP tool through the proxy and print its result",
		Long: `Calls the tool NAME with the JSON object of arguments (default {}; "-"
reads it from standard input) and prints the text of the result. A result
the tool marks as an error goes to standard error and exits 1; --json
prints the whole MCP result.`,
		Example: `  actionctl mcp call echo '{"message": "hi"}'
  actionctl mcp call fs_read_text_file '{"path": "/workspace/README.md"}'
  actionctl --json mcp call get-sum '{"a": 1, "b": 2}'`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := "{}"
			if len(args) == 2 {
				var err error
				if raw, err = argOrStdin(args, 1); err != nil {
					return err
				}
			}
			var arguments map[string]any
			if err := json.Unmarshal([]byte(raw), &arguments); err != nil {
				return &usageError{fmt.Errorf("arguments must be a JSON object: %w", err)}
			}
			ctx := cmd.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			session, err := a.mcpSession(cmd.Context())
			if err != nil {
				return err
			}
			defer session.Close()
			res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: args[0], Arguments: arguments})
			if err != nil {
				return fmt.Errorf("call MCP tool %s: %w", args[0], err)
			}
			if res.IsError {
				a.code = exitError
			}
			if a.json {
				return a.printJSON(res)
			}
			out := a.stdout
			if res.IsError {
				out = a.stderr
			}
			for _, c := range res.Content {
				switch c := c.(type) {
				case *sdk.TextContent:
					fmt.Fprintln(out, c.Text)
				default:
					b, _ := json.Marshal(c)
					fmt.Fprintln(out, string(b))
				}
			}
			if len(res.Content) == 0 && res.StructuredContent != nil {
				b, _ := json.Marshal(res.StructuredContent)
				fmt.Fprintln(out, string(b))
			}
			return nil
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", 0, "give up on the call after this long (0: the server's limit)")
	return c
}

// mcpSession opens an MCP session on the server's /mcp/sse. The stream
// lives as long as ctx, so ctx must not be a short deadline.
func (a *app) mcpSession(ctx context.Context) (*sdk.ClientSession, error) {
	key := a.apiKey
	if key == "" {
		key = os.Getenv("SESSION_API_KEY")
	}
	rt := &mcpTransport{key: key}
	c := sdk.NewClient(&sdk.Implementation{Name: "actionctl", Version: version}, nil)
	session, err := c.Connect(ctx, &sdk.SSEClientTransport{
		Endpoint:   strings.TrimRight(a.url, "/") + "/mcp/sse",
		HTTPClient: &http.Client{Transport: rt},
	}, nil)
	if err != nil {
		switch rt.status.Load() {
		case http.StatusUnauthorized, http.StatusForbidden:
			return nil, fmt.Errorf("connect to the MCP proxy: %w", client.ErrUnauthorized)
		case http.StatusNotFound:
			return nil, fmt.Errorf("connect to the MCP proxy: no MCP server is configured (404)")
		case http.StatusServiceUnavailable:
			return nil, fmt.Errorf("connect to the MCP proxy: %w", client.ErrNotReady)
		}
		return nil, fmt.Errorf("connect to the MCP proxy: %w", err)
	}
	return session, nil
}

// mcpTransport sends the key in the three headers the host's MCP client
// sends, and remembers a refusal's status to explain it.
type mcpTransport struct {
	key    string
	status atomic.Int32
}

func (t *mcpTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.key != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+t.key)
		r.Header.Set("s", t.key)
		r.Header.Set(api.HeaderAPIKey, t.key)
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.StatusCode >= 400 {
		t.status.Store(int32(resp.StatusCode))
	}
	return resp, err
}
