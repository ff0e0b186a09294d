"""Gemini CLI hook I/O (hot path): one Gemini hook event read into gate's terms, and gate's answer written back in
Gemini's schema.

Read from Gemini CLI 0.61 (packages/core/src/hooks: types.ts, hookEventHandler.ts, hookRunner.ts):

- Every event is JSON on stdin: session_id, transcript_path (the session's chat recording, JSONL under
  ~/.gemini/tmp/…/chats/, read by gate/hosts/gemini/chat.py), cwd, hook_event_name, timestamp, and the event's
  own fields. There is no turn id.
- The events, in gate's terms: `BeforeAgent` {prompt} is the prompt submit (UserPromptSubmit), answered with
  hookSpecificOutput.additionalContext (appended to the prompt, `<` and `>` escaped); `AfterAgent` {prompt,
  prompt_response, stop_hook_active} is the Stop: `decision: "deny"` (or "block") with a `reason` rejects the
  reply and sends the reason to the model as a new prompt; `BeforeTool` {tool_name, tool_input} is PreToolUse:
  `decision: "deny"` with a `reason` refuses the call (the reason reaches the model as the tool's error), and it
  takes no additionalContext; `AfterTool` {tool_name, tool_input, tool_response} is read as PreToolUse too, for
  the anchors: its additionalContext is appended to the tool's result (a deny there would hide the result, so gate
  never gives one); `SessionStart` {source: startup|resume|clear} takes additionalContext. Gemini
  has no event after a compression (`PreCompress` is advisory): gate does not wire it.
- Tools: the shell is `run_shell_command` {command}; edits are `replace` {file_path, old_string, new_string}
  and `write_file` {file_path, content}; reads `read_file` {file_path}; file paths may be relative to cwd.

What gate's gates read is Claude Code's spelling (gate/hook.py); this module translates, so the gates do not
know which agent they serve.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

AGENT = "gemini"

# Gemini's event names -> gate's (Claude Code's). AfterTool is a tool call too, reported after it ran: the only
# tool event whose context reaches the model (appended to the tool's result), so the path anchors come there.
EVENTS = {
    "BeforeAgent": "UserPromptSubmit",
    "AfterAgent": "Stop",
    "BeforeTool": "PreToolUse",
    "AfterTool": "PreToolUse",
    "SessionStart": "SessionStart",
}

# Gemini's tools, as the gates know them: (gate's tool name, Gemini's input key -> gate's).
TOOLS: dict[str, tuple[str, dict[str, str]]] = {
    "run_shell_command": ("Bash", {"command": "command"}),
    "replace": ("Edit", {"file_path": "file_path", "old_string": "old_string", "new_string": "new_string"}),
    "write_file": ("Write", {"file_path": "file_path", "content": "content"}),
    "read_file": ("Read", {"file_path": "file_path"}),
    "grep_search": ("Grep", {"pattern": "pattern", "dir_path": "path"}),
    "glob": ("Glob", {"pattern": "pattern", "dir_path": "path"}),
}
_PATH_KEYS = ("file_path", "path")

# Gemini answers an AfterAgent block by sending its reason as a new prompt (BeforeAgent fires for it) and runs a new
# AfterAgent when that prompt's reply is done; a tool call in between starts its loop again without
# stop_hook_active. gate/hook.py reads both as the block's continuation.
CONTINUES_AFTER_BLOCK = True

# What the agent cannot be given, per Gemini event: BeforeTool takes no additionalContext, so the memories
# anchored to a path would be marked delivered there and never reach the model; with no budget the anchors gate
# delivers none at BeforeTool (audited as dropped), and AfterTool delivers them with the call's result.
_NO_ANCHORS = {"anchor_budget_tokens": 0}


def settings_for(event: dict[str, Any]) -> dict[str, Any]:
    """The settings this event overrides (read by gate/hook.py)."""
    return _NO_ANCHORS if event.get("gemini_event_name") == "BeforeTool" else {}


def _tool_call(tool: Any, tool_input: Any, cwd: str) -> tuple[Any, Any]:
    """A Gemini tool call in Claude Code's terms; anything else passes as it came."""
    if not isinstance(tool, str) or not isinstance(tool_input, dict) or tool not in TOOLS:
        return tool, tool_input
    name, keys = TOOLS[tool]
    read: dict[str, Any] = {}
    for theirs, ours in keys.items():
        if theirs in tool_input:
            value = tool_input[theirs]
            if ours in _PATH_KEYS and isinstance(value, str) and value and not os.path.isabs(value):
                value = os.path.join(cwd, value)
            read[ours] = value
    return name, read


def read_event(event: dict[str, Any]) -> dict[str, Any]:
    """The event in gate's terms (Claude Code's spelling): a new dict, the agent named in it."""
    out = dict(event)
    out["agent"] = AGENT
    name = event.get("hook_event_name")
    if isinstance(name, str) and name in EVENTS:
        out["hook_event_name"] = EVENTS[name]
        out["gemini_event_name"] = name
    # transcript_path is Gemini's chat recording: gate.session.transcript reads its records through
    # gate/hosts/gemini/chat.py. An empty one (no recording) is none.
    if not out.get("transcript_path"):
        out.pop("transcript_path", None)
    if name == "AfterAgent":
        reply = event.get("prompt_response")
        if isinstance(reply, str):
            out["last_assistant_message"] = reply
    if "tool_name" in event:
        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else os.getcwd()
        out["tool_name"], out["tool_input"] = _tool_call(event.get("tool_name"), event.get("tool_input"), cwd)
        if out["tool_name"] != event.get("tool_name"):
            out["gemini_tool_name"] = event.get("tool_name")
    return out


def write_verdict(event_name: str, output: dict[str, Any] | None, event: dict[str, Any] | None = None
                  ) -> dict[str, Any] | None:
    """gate's answer (in Claude Code's spelling, for gate's event name) as Gemini takes it at the Gemini event the
    hook read (`event`, from read_event); raises ValueError for one that cannot be said to Gemini (the hook fails
    open)."""
    if output is None:
        return None
    gemini = (event or {}).get("gemini_event_name") or next((g for g, ours in EVENTS.items() if ours == event_name),
                                                            None)
    if gemini is None or EVENTS.get(gemini) != event_name:
        raise ValueError(f"Gemini has no event for {event_name}")
    if event_name == "Stop":
        reason = output.get("reason")
        if set(output) == {"decision", "reason"} and output["decision"] == "block" and isinstance(reason, str) \
                and reason.strip():
            return {"decision": "deny", "reason": reason}  # AfterAgent: the reason is the model's next prompt
        if not output:
            return None
        raise ValueError(f"Gemini takes no AfterAgent answer {sorted(output)}")
    specific = output.get("hookSpecificOutput")
    if set(output) != {"hookSpecificOutput"} or not isinstance(specific, dict):
        raise ValueError(f"Gemini takes no {gemini} answer {sorted(output)}")
    if specific.get("hookEventName") != event_name:
        raise ValueError(f"a {event_name} answer names {specific.get('hookEventName')!r}")
    unknown = set(specific) - {"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason"}
    if unknown:
        raise ValueError(f"Gemini takes no {gemini} field {sorted(unknown)}")
    context = specific.get("additionalContext")
    if context is not None and not isinstance(context, str):
        raise ValueError("additionalContext is not a string")
    if event_name == "PreToolUse":
        decision = specific.get("permissionDecision")
        reason = specific.get("permissionDecisionReason")
        if gemini == "AfterTool":  # the call ran: a deny would hide its result; the context follows the result
            if decision is not None or reason is not None:
                raise ValueError("Gemini's AfterTool takes no refusal: the call has run")
            if context is None:
                return None
            return {"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": context}}
        if decision == "deny" and isinstance(reason, str) and reason.strip():
            return {"decision": "deny", "reason": reason}  # the reason reaches the model as the tool's error
        if decision is not None or reason is not None:
            raise ValueError(f"Gemini takes no BeforeTool decision {decision!r} with reason {reason!r}")
        return None  # BeforeTool takes no context: nothing to say (settings_for keeps the anchors from firing)
    if "permissionDecision" in specific or "permissionDecisionReason" in specific:
        raise ValueError(f"Gemini takes no decision at {gemini}")
    if context is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": gemini, "additionalContext": context}}
