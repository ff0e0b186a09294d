"""Codex CLI hook I/O (hot path): one Codex hook event read into gate's terms, and gate's answer written back in
Codex's exact schema.

Read from Codex CLI 0.171 (its hook schemas, codex-rs/hooks/schema, and events seen from `codex exec`):

- Every event is JSON on stdin: session_id, turn_id (not on SessionStart), transcript_path (the session's
  rollout JSONL, or null), cwd, model, permission_mode, hook_event_name, and the event's own fields (prompt;
  tool_name, tool_input, tool_use_id; source; stop_hook_active, last_assistant_message; agent_id, agent_type
  inside a subagent).
- A shell call arrives as tool_name "Bash" with {"command": …} (the model's exec_command / shell tool). An
  edit arrives as tool_name "apply_patch" with {"command": PATCH}, the patch in Codex's own envelope
  (`*** Begin Patch`, `*** Update File: PATH`, `*** Add File: PATH`, `*** Delete File: PATH`, `*** Move to: PATH`).
- A subagent (Codex's multi-agent tools; `[features] multi_agent_v2`) is spawned by the tool
  `collaborationspawn_agent` (namespace and name run together; `spawn_agent` in the older tool set) with
  {task_name, message, fork_turns}; fork_turns defaults to "all" (the parent's history goes along). The child then
  fires SubagentStart (session_id: the parent's; transcript_path: the child's own rollout, whose session_meta names
  the task as agent_path /root/TASK_NAME; agent_id: the child's thread id; agent_type: its role, "default"),
  whose additionalContext reaches the child's first model request as a developer message; its own tool calls
  fire PreToolUse with agent_id and agent_type; its end fires SubagentStop. It fires no UserPromptSubmit.
- An MCP tool call arrives as tool_name `mcp__SERVER__TOOL` with the tool's own arguments, as in Claude Code.
- The answer is strict: an object with a field Codex does not know for that event is rejected whole (the hook
  run counts as failed). PreToolUse may deny with a reason, or add context; `permissionDecision: "allow"` is
  valid only with `updatedInput`, and "ask" never. Stop blocks with `decision: "block"` and a non-empty
  `reason` (it comes back to the model as a user message).

What gate's gates read is Claude Code's spelling (gate/hook.py); this module translates, so the gates do not
know which agent they serve.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

AGENT = "codex"

# Codex's names for a shell call (only "Bash" reaches a 0.171 hook; the model-facing names are kept in case a
# build passes them through) and the tool_input keys that hold its command line.
SHELL_TOOLS = frozenset({"Bash", "shell", "exec_command", "local_shell", "container.exec", "shell_command"})
SHELL_KEYS = ("command", "cmd")
PATCH_TOOL = "apply_patch"
# The spawn tool's hook names: the multi-agent v2 namespace's (observed in 0.171) and the older tool set's.
SPAWN_TOOLS = frozenset({"collaborationspawn_agent", "spawn_agent"})
# The patch envelope's file headers: the path follows the marker on the same line.
_PATCH_MARKERS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")
# Codex's SessionStart sources; a fork continues another session's conversation, as a resume does.
SOURCES = {"startup": "startup", "resume": "resume", "clear": "clear", "compact": "compact", "fork": "resume"}

# The fields Codex accepts in an answer, per event (its *.command.output.schema.json: additionalProperties
# false). The universal fields (continue, stopReason, suppressOutput, systemMessage) are left out on purpose:
# gate never sends them.
_SPECIFIC: dict[str, frozenset[str]] = {
    "UserPromptSubmit": frozenset({"hookEventName", "additionalContext"}),
    "SessionStart": frozenset({"hookEventName", "additionalContext"}),
    "PreToolUse": frozenset({"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason"}),
    "SubagentStart": frozenset({"hookEventName", "additionalContext"}),
}
# What Codex cannot be given where Claude Code can: a spawn's memories go in the child's SubagentStart (its
# additionalContext reaches the child), not in an updatedInput of the spawn call (Codex takes one only with
# permissionDecision "allow", and the task may reach the hook encrypted).
_SPAWN_SETTINGS = {"spawn_delivery": "subagent_start"}


def patch_files(patch: str) -> list[tuple[str, str]]:
    """The (action, path) pairs a patch names, in order: action is update, add, delete or move."""
    found: list[tuple[str, str]] = []
    for line in patch.splitlines():
        if not line.startswith("*** "):
            continue
        for marker in _PATCH_MARKERS:
            if line.startswith(marker):
                path = line[len(marker) :].strip()
                if path:
                    found.append((marker[4:].split(" ", 1)[0].lower(), path))
                break
    return found


def _tool_call(tool: Any, tool_input: Any, cwd: str) -> tuple[Any, Any]:
    """A Codex tool call in Claude Code's terms: a shell call is Bash {command}, a patch is an Edit (or a Write
    when it only adds files) of every file it names, a spawn is an Agent {prompt, subagent_type}. Anything else
    (an MCP tool's mcp__SERVER__TOOL among them) passes as it came."""
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return tool, tool_input
    if tool in SHELL_TOOLS:
        for key in SHELL_KEYS:
            command = tool_input.get(key)
            if isinstance(command, list) and all(isinstance(word, str) for word in command):
                command = _joined(command)
            if isinstance(command, str):
                return "Bash", {"command": command}
        return tool, tool_input
    if tool == PATCH_TOOL:
        patch = tool_input.get("command", tool_input.get("input", tool_input.get("patch")))
        files = patch_files(patch) if isinstance(patch, str) else []
        if not files:
            return tool, tool_input
        paths = list(dict.fromkeys(name if os.path.isabs(name) else os.path.join(cwd, name) for _, name in files))
        adds_only = all(action == "add" for action, _ in files)
        # file_path is the first file (what an anchor's message names); file_paths every file the patch touches,
        # so the anchors of each one fire (rules/triggers.toml [tools] files). Whatever the files, it is a change.
        return ("Write" if adds_only else "Edit"), {"file_path": paths[0], "file_paths": paths,
                                                     "files": [name for _, name in files]}
    if tool in SPAWN_TOOLS:
        message = tool_input.get("message")
        if not isinstance(message, str):
            return tool, tool_input
        # fork_turns "all" (v2's default) hands the child the parent's history: Claude Code's fork.
        fork_turns = tool_input.get("fork_turns", "all" if tool != "spawn_agent" else "none")
        fork = fork_turns != "none" or tool_input.get("fork_context") is True
        read = {"prompt": message, "subagent_type": "fork" if fork else "default"}
        name = tool_input.get("task_name")
        if isinstance(name, str) and name:
            read["description"] = name
        return "Agent", read
    return tool, tool_input


def _joined(words: list[str]) -> str:
    """An argv as one command line: `bash -lc LINE` is the line itself."""
    if len(words) == 3 and os.path.basename(words[0]) in ("bash", "sh", "zsh") and words[1] in ("-lc", "-c"):
        return words[2]
    import shlex

    return shlex.join(words)


def read_event(event: dict[str, Any]) -> dict[str, Any]:
    """The event in gate's terms (Claude Code's spelling): a new dict, the agent named in it."""
    from gate import render

    render.ABSOLUTE = True  # the agent's `bash -lc` may not find the hook's `gate` on its PATH (exit 127)
    out = dict(event)
    out["agent"] = AGENT
    if out.get("transcript_path") is None:
        out.pop("transcript_path", None)  # a rollout Codex did not write (e.g. an ephemeral session)
    turn = event.get("turn_id")
    if isinstance(turn, str) and turn and "prompt_id" not in out:
        out["prompt_id"] = turn  # one prompt's turn: what the search-first request is keyed on
    source = event.get("source")
    if event.get("hook_event_name") == "SessionStart" and isinstance(source, str):
        out["source"] = SOURCES.get(source, source)
    if "tool_name" in event:
        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else os.getcwd()
        out["tool_name"], out["tool_input"] = _tool_call(event.get("tool_name"), event.get("tool_input"), cwd)
        if out["tool_name"] != event.get("tool_name"):
            out["codex_tool_name"] = event.get("tool_name")
    return out


def settings_for(event: dict[str, Any]) -> dict[str, Any]:
    """The settings this event overrides (read by gate/hook.py): a spawn's memories wait for SubagentStart."""
    return _SPAWN_SETTINGS if event.get("codex_tool_name") in SPAWN_TOOLS else {}


def write_verdict(event_name: str, output: dict[str, Any] | None, event: dict[str, Any] | None = None
                  ) -> dict[str, Any] | None:
    """gate's answer as Codex takes it; raises ValueError for one Codex would reject (the hook fails open)."""
    if output is None:
        return None
    if event_name == "Stop":
        reason = output.get("reason")
        if set(output) == {"decision", "reason"} and output["decision"] == "block" and isinstance(reason, str) \
                and reason.strip():
            return {"decision": "block", "reason": reason}
        if not output:
            return None
        raise ValueError(f"Codex takes no Stop answer {sorted(output)}")
    allowed = _SPECIFIC.get(event_name)
    specific = output.get("hookSpecificOutput")
    if allowed is None or set(output) != {"hookSpecificOutput"} or not isinstance(specific, dict):
        raise ValueError(f"Codex takes no {event_name} answer {sorted(output)}")
    unknown = set(specific) - allowed
    if unknown:
        raise ValueError(f"Codex takes no {event_name} field {sorted(unknown)}")
    if specific.get("hookEventName") != event_name:
        raise ValueError(f"a {event_name} answer names {specific.get('hookEventName')!r}")
    decision = specific.get("permissionDecision")
    reason = specific.get("permissionDecisionReason")
    # Only a deny with a reason: "allow" needs an updatedInput gate never gives, "ask" Codex refuses.
    if (decision is not None or reason is not None) and (
            decision != "deny" or not isinstance(reason, str) or not reason.strip()):
        raise ValueError(f"Codex takes no PreToolUse decision {decision!r} with reason {reason!r}")
    context = specific.get("additionalContext")
    if context is not None and not isinstance(context, str):
        raise ValueError("additionalContext is not a string")
    return output
