"""A Gemini CLI chat recording (its transcript: the JSONL its hooks name as transcript_path) read line by line as
the transcript entries gate's turn reader knows (hot path, standard library only; imported only when a Gemini
record is met).

What is what (Gemini CLI 0.61, packages/core/src/services/chatRecordingService.ts):
- the first line holds the session's fields (sessionId, projectHash, …); `{"$set": …}` lines update them (one
  carries the session's opening context), `{"$rewindTo": ID}` rewinds: none is conversation;
- a message record is `{"id", "timestamp", "type", "content", …}`; `type` "user" is a prompt (its text parts, and
  a `<hook_context>…</hook_context>` part a BeforeAgent hook added, which is gate's own and left out) or the results
  of the model's tool calls (`functionResponse` parts, with the call's id and `response.output` or
  `response.error`); "gemini" is the model's reply (`content`, a string) and its `toolCalls` ({id, name, args,
  result, status}); "info", "error", "warning" are the CLI's own lines;
- a record is appended again whenever it changes (a reply's tool calls come after its text): the last line with
  an id is that record; gate.session.transcript reads backwards and keeps the first it meets (`ID_KEY`).
Each line becomes at most one entry, as for Codex's rollouts (gate/hosts/codex/rollout.py).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ID_KEY = "gemini_record_id"  # the record's id, on the entry: older copies of a record are skipped by it
HOOK_CONTEXT = "<hook_context>"
# Gemini's tools as gate reads them (the names the hooks' tool calls are read under, gate/hosts/gemini/hook_io.py).
TOOLS = {"run_shell_command": "Bash", "replace": "Edit", "write_file": "Write", "read_file": "Read",
         "grep_search": "Grep", "glob": "Glob"}
_EXIT = "Exit Code: "


def is_record(line: dict[str, Any]) -> bool:
    """A Gemini message record (Claude Code's lines carry a `message`; Gemini's a `content` and an id)."""
    return (line.get("type") in ("user", "gemini") and "content" in line and "message" not in line
            and isinstance(line.get("id"), str))


def entry(line: dict[str, Any]) -> dict[str, Any] | None:
    """The transcript entry a message record is, or None for one that is none."""
    kind = line.get("type")
    content = line.get("content")
    out: dict[str, Any] | None = None
    if kind == "gemini":
        blocks: list[dict[str, Any]] = []
        if isinstance(content, str) and content.strip():
            blocks.append({"type": "text", "text": content})
        calls = line.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and isinstance(call.get("name"), str):
                args = call.get("args") if isinstance(call.get("args"), dict) else {}
                blocks.append({"type": "tool_use", "id": str(call.get("id", "")),
                               "name": TOOLS.get(call["name"], call["name"]), "input": args})
        out = {"type": "assistant", "message": {"role": "assistant", "content": blocks}}
    elif kind == "user" and isinstance(content, list):
        results = [_result(part["functionResponse"]) for part in content
                   if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)]
        if results:
            out = {"type": "user", "message": {"role": "user", "content": results}}
        else:
            texts = [part["text"] for part in content if isinstance(part, dict)
                     and isinstance(part.get("text"), str) and not part["text"].lstrip().startswith(HOOK_CONTEXT)]
            out = {"type": "user", "message": {"role": "user", "content": "\n".join(texts)}}
    elif kind == "user" and isinstance(content, str):
        out = {"type": "user", "message": {"role": "user", "content": content}}
    if out is not None:
        out[ID_KEY] = line["id"]
        if isinstance(line.get("timestamp"), str):
            out["timestamp"] = line["timestamp"]
    return out


def _result(response: dict[str, Any]) -> dict[str, Any]:
    """A functionResponse as a tool_result: its output (or error), an error when it failed or exited non-zero."""
    body = response.get("response") if isinstance(response.get("response"), dict) else {}
    error = body.get("error")
    text = str(error if error is not None else body.get("output", ""))
    failed = error is not None
    at = text.find(_EXIT)
    if at >= 0:
        code = text[at + len(_EXIT):].split("\n", 1)[0].strip()
        failed = failed or (code.lstrip("-").isdigit() and int(code) != 0)
    return {"type": "tool_result", "tool_use_id": str(response.get("id", "")), "content": text,
            "is_error": failed}
