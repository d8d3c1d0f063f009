// Package mcp is the sandbox's MCP proxy: it runs the stdio MCP servers the
// host lists (POST /update_mcp_server), keeps them alive, and serves the
// union of their tools, prompts and static resources over one SSE endpoint, which the host's
// MCP client reaches at {runtime}/mcp/sse.
//
// What the host expects, read from OpenHands (openhands-ai 0.62.0 to 1.6.0,
// the versions that still have the action execution server) and FastMCP
// (2.12 to 3.4, the versions those pin):
//
//   - Transport: SSE (MCP 2024-11-05), never streamable HTTP. The host adds
//     the runtime as an MCPSSEServerConfig with url {runtime}/mcp/sse, so
//     its client GETs /mcp/sse, waits for the "endpoint" event, and POSTs
//     JSON-RPC messages to the URL that event names, resolved against the
//     SSE URL. Like FastMCP's SSE app mounted at /mcp, the endpoint is
//     /mcp/messages/?session_id=<id>; a POST answers 202 and the reply
//     comes on the SSE stream.
//   - Tool names: FastMCP.as_proxy over an MCPConfig with exactly one server
//     connects to that server directly, so its tools keep their names; with
//     two or more it mounts each server on a composite server with the
//     server's name as prefix, so tools and prompts are "<server>_<name>"
//     (and resource URIs "proto://<server>/path"; resource templates are
//     not forwarded). The choice follows the
//     number of configured servers, not of running ones, and a server that
//     fails is left out of the listing while the others answer.
//   - Errors: a call that fails in the proxy (a dead or hung server, a
//     timeout) comes back as a tool result with isError set and the reason
//     as text, as FastMCP's proxy returns it, so the agent reads it.
//   - Auth: upstream's HTTP middleware demands X-Session-API-Key (403
//     {"detail": "Invalid API Key"}) before FastMCP's bearer check (401);
//     the host sends the key as Authorization: Bearer, s and
//     X-Session-API-Key. The HTTP server, not this package, checks it.
//
// A Manager is the whole proxy: Update replaces the set of servers (an
// unchanged server keeps running), Handler serves the SSE endpoint, Status
// reports each server, Close stops them all.
package mcp
