"""A minimal stdio MCP server for the tests: one tool, echo."""

import json
import sys


def reply(id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    method, id = msg.get("method"), msg.get("id")
    if id is None:
        continue  # a notification
    if method == "initialize":
        reply(id, {"protocolVersion": msg["params"].get("protocolVersion", "2024-11-05"),
                   "capabilities": {"tools": {}}, "serverInfo": {"name": "echo", "version": "1"}})
    elif method == "tools/list":
        reply(id, {"tools": [{"name": "echo", "description": "Says the message back",
                              "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}},
                                              "required": ["message"]}}]})
    elif method == "tools/call":
        args = msg["params"].get("arguments") or {}
        reply(id, {"content": [{"type": "text", "text": "echo: " + str(args.get("message"))}], "isError": False})
    elif method == "ping":
        reply(id, {})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id,
                                     "error": {"code": -32601, "message": "no such method: " + str(method)}}) + "\n")
        sys.stdout.flush()
