"""A stdio MCP server for the end-to-end tests (tests/e2e/test_codex.py, test_mcp_tools.py): two tools, write_note
(appends a note; answers "written N") and read_note ("notes: …"), newline-delimited JSON-RPC. Only stdlib."""


import json
import sys

TOOLS = [{"name": "write_note", "description": "Write a note",
          "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
         {"name": "read_note", "description": "Read the notes", "inputSchema": {"type": "object", "properties": {}}}]
notes = []
for line in sys.stdin:
    message = json.loads(line)
    if message.get("id") is None:
        continue
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                  "serverInfo": {"name": "notes", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and params.get("name") == "write_note":
        notes.append(params["arguments"]["text"])
        result = {"content": [{"type": "text", "text": f"written {len(notes)}"}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "notes: " + ("|".join(notes) or "none")}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
