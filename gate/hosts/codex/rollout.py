"""A Codex CLI rollout (its transcript: JSON lines of `session_meta`, `turn_context`, `response_item`,
`event_msg`, `compacted`) read line by line as the transcript entries gate's turn reader knows (hot path,
standard library only; imported only when a rollout line is met).

Each rollout line becomes at most one entry, so a byte offset in the rollout is a byte offset in the entries
too: the hooks' backward reader and `gate replay`'s forward walk read the file as it is, with no copy.
What is what (Codex CLI 0.1xx, as its rollouts in the corpus hold it):
- a person's prompt is an `event_msg` `user_message`. The `response_item` user messages repeat it beside what
  the CLI itself puts there (AGENTS.md, the environment context, skills, a subagent's notification), so they
  are never a prompt; one that carries a hook's reason (`<hook_prompt`) is a Stop hook's block, as Claude
  Code's "Stop hook feedback:".
- the agent's text is a `response_item` assistant message (the `agent_message` event repeats it); its tool
  calls are `function_call` / `custom_tool_call`, their results `*_output` with the same `call_id`.
- a shell call (`exec_command`, `shell`, `local_shell`, …) is a Bash call with its command line; a patch
  (`apply_patch`) is one Write (an added file) or Edit (an updated, moved or deleted one) per file it touches.
- `compacted` is a compaction boundary; `turn_aborted` an interruption (the turn ends without a Stop).
"""

from __future__ import annotations

from gate import fastjson as json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The line types of a rollout; a line of another type is none of Codex's (the caller reads it as it is).
ROLLOUT_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
# An entry type that carries a rollout's session fields (id, cwd) and is no conversation.
SESSION_META = "codex-session-meta"

# The shell tools: their command line is in `cmd` (exec_command), `command` (shell: a list of words or a
# string) or, for `exec`, in a JavaScript call of tools.exec_command.
SHELL_TOOLS = frozenset({"exec_command", "shell", "local_shell", "container.exec", "shell_command", "exec"})
PATCH_TOOL = "apply_patch"
# The patch format's file headers, and the tool gate reads each as.
_PATCH_HEADERS = (("*** Add File: ", "Write"), ("*** Update File: ", "Edit"), ("*** Delete File: ", "Edit"))
_MOVE_HEADER = "*** Move to: "
# What the CLI puts before an interruption's and a hook's user message.
HOOK_PROMPT = "<hook_prompt"
HOOK_FEEDBACK = "Stop hook feedback:\n"  # how gate.session.turn knows a Stop hook's block
INTERRUPTED = "[Request interrupted by user]"


def is_rollout_line(entry: dict[str, Any]) -> bool:
    return entry.get("type") in ROLLOUT_TYPES and "payload" in entry


def entry(line: dict[str, Any]) -> dict[str, Any] | None:
    """The transcript entry a rollout line is, or None for a line that is none (reasoning, token counts,
    the events that repeat a response item)."""
    kind = line.get("type")
    payload = line.get("payload")
    if not isinstance(payload, dict):
        return None
    stamp = line.get("timestamp")
    if kind == "response_item":
        found = _response_item(payload)
    elif kind == "event_msg":
        found = _event(payload)
    elif kind == "session_meta":
        found = {"type": SESSION_META, "sessionId": str(payload.get("id") or ""), "cwd": payload.get("cwd") or "",
                 "subagent": _subagent_source(payload.get("source"))}
    elif kind == "turn_context":
        found = {"type": "codex-turn-context", "cwd": payload.get("cwd") or ""}
    elif kind == "compacted":
        found = {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto"}}
    else:
        return None
    if found is not None and isinstance(stamp, str):
        found["timestamp"] = stamp
    return found


def _subagent_source(source: Any) -> bool:
    return isinstance(source, dict) and "subagent" in source


def _user(text: str, **fields: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}, **fields}


def _event(payload: dict[str, Any]) -> dict[str, Any] | None:
    kind = payload.get("type")
    if kind == "user_message":
        text = str(payload.get("message") or "")
        if text.lstrip().startswith(HOOK_PROMPT):
            return _user(HOOK_FEEDBACK + text)
        return _user(text)
    if kind == "turn_aborted":
        return _user(INTERRUPTED)
    return None


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [str(block.get("text", "")) for block in content if isinstance(block, dict)]
    return "\n".join(part for part in parts if part)


def _response_item(payload: dict[str, Any]) -> dict[str, Any] | None:
    kind = payload.get("type")
    if kind == "message":
        role = payload.get("role")
        text = _texts(payload.get("content"))
        if role == "assistant":
            return {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}
        if role == "user":
            if text.lstrip().startswith(HOOK_PROMPT):
                return _user(HOOK_FEEDBACK + text)
            return _user(text, isMeta=True)  # what the CLI put there; the prompt is the user_message event
        return None
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        call_id = str(payload.get("call_id") or payload.get("id") or "")
        blocks = tool_uses(str(payload.get("name") or kind), _arguments(payload), call_id)
        return {"type": "assistant", "message": {"role": "assistant", "content": blocks}}
    if kind in ("function_call_output", "custom_tool_call_output"):
        text, failed = _output(payload.get("output"))
        block = {"type": "tool_result", "tool_use_id": str(payload.get("call_id") or ""), "content": text,
                 "is_error": failed}
        return {"type": "user", "message": {"role": "user", "content": [block]}}
    return None


def _arguments(payload: dict[str, Any]) -> Any:
    if "input" in payload and isinstance(payload["input"], str):
        return payload["input"]  # a custom tool's raw input: the patch text, or exec's script
    if isinstance(payload.get("action"), dict):  # local_shell_call
        return payload["action"]
    raw = payload.get("arguments")
    if isinstance(raw, str):
        parsed = json.loads_or(raw, None)
        return parsed if parsed is not None else raw
    return raw if isinstance(raw, dict) else {}


def shell_command(arguments: Any) -> str | None:
    """The command line of a shell call's arguments, or None when they hold none."""
    if isinstance(arguments, str):
        # `exec`: a script that calls tools.exec_command({cmd: "…"}) — the quoted command is the line run
        start = arguments.find("cmd:")
        if start < 0:
            start = arguments.find('"cmd"')
        if start < 0:
            return None
        quote = arguments.find('"', arguments.find(":", start) + 1)
        if quote < 0:
            return None
        value = json.loads_or(_json_string_at(arguments, quote), None)
        return value if isinstance(value, str) else None
    if not isinstance(arguments, dict):
        return None
    for key in ("cmd", "command"):
        value = arguments.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(word, str) for word in value):
            # ["bash", "-lc", "LINE"] runs LINE; any other list is the words of the command itself
            if len(value) == 3 and value[1] in ("-lc", "-c") and value[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh"):
                return value[2]
            return " ".join(value)
    return None


def _json_string_at(text: str, quote: int) -> str:
    """The JSON string literal that opens at `quote` (its closing quote found past escapes)."""
    index = quote + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == '"':
            return text[quote:index + 1]
        index += 1
    return '""'


def patch_files(patch: str) -> list[tuple[str, str, str, str]]:
    """(tool, path, removed lines, added lines) for each file an apply_patch text touches, in order."""
    files: list[tuple[str, str, list[str], list[str]]] = []
    for line in patch.splitlines():
        for header, tool in _PATCH_HEADERS:
            if line.startswith(header):
                files.append((tool, line[len(header):].strip(), [], []))
                break
        else:
            if not files:
                continue
            if line.startswith(_MOVE_HEADER):
                files.append(("Write", line[len(_MOVE_HEADER):].strip(), [], []))
            elif line.startswith("+"):
                files[-1][3].append(line[1:])
            elif line.startswith("-"):
                files[-1][2].append(line[1:])
    return [(tool, path, "\n".join(old), "\n".join(new)) for tool, path, old, new in files if path]


def tool_uses(name: str, arguments: Any, call_id: str) -> list[dict[str, Any]]:
    """The tool_use blocks a Codex tool call is to gate: a Bash call, one file tool per patched file, or the
    call under its own name. The first block carries the call's id (its result names it)."""
    if name in SHELL_TOOLS:
        command = shell_command(arguments)
        if command is not None:
            return [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}]
    if name == PATCH_TOOL:
        patch = arguments if isinstance(arguments, str) else (
            str(arguments.get("input") or arguments.get("patch") or "") if isinstance(arguments, dict) else "")
        blocks = []
        for number, (tool, path, old, new) in enumerate(patch_files(patch)):
            fields = {"file_path": path, "content": new} if tool == "Write" else {
                "file_path": path, "old_string": old, "new_string": new}
            blocks.append({"type": "tool_use", "id": call_id if number == 0 else f"{call_id}#{number}",
                           "name": tool, "input": fields})
        if blocks:
            return blocks
    tool_input = arguments if isinstance(arguments, dict) else {"input": arguments}
    return [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}]


_EXIT_MARK = "Process exited with code "


def _output(output: Any) -> tuple[str, bool]:
    """(text, failed) of a tool call's output: the exit code Codex reports, when it reports one."""
    if isinstance(output, dict):
        text = _texts(output.get("content")) or str(output.get("output") or "")
        return text, output.get("success") is False
    if isinstance(output, list):
        return _texts(output), False
    text = str(output or "")
    if text.startswith("{") and '"metadata"' in text:
        parsed = json.loads_or(text, None)
        if isinstance(parsed, dict) and isinstance(parsed.get("metadata"), dict):
            code = parsed["metadata"].get("exit_code")
            return str(parsed.get("output") or ""), isinstance(code, int) and code != 0
    mark = text.find(_EXIT_MARK, 0, 400)
    if mark >= 0:
        digits = text[mark + len(_EXIT_MARK):].split("\n", 1)[0].strip()
        return text, digits.lstrip("-").isdigit() and int(digits) != 0
    return text, False
