"""Builds transcript JSONL lines in the shape Claude Code 2.1.332 writes them (see claude-code-hooks.md).

Used by the unit tests and by build_stop_turns.py, which writes the labelled Stop turns under stop_turns/.
One assistant line per content block (blocks of one API message share message.id); tool results are type
"user" lines with a list of tool_result blocks; hook feedback is an isMeta user line; and the noise types the
reader must skip (attachment, system, api-request, api-request-blob, queue-operation, last-prompt,
cost-state, file-history-snapshot) appear where the CLI puts them.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

SESSION = "5b0e7c1a-3f1d-4c8e-9a57-2f6d0c9e1b44"
CWD = "/workspace/project"
VERSION = "2.1.332"


class Transcript:
    def __init__(self, session: str = SESSION, cwd: str = CWD) -> None:
        self.session = session
        self.cwd = cwd
        self.lines: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._parent: str | None = None
        self._clock = itertools.count(0)

    # -- helpers ------------------------------------------------------------------------------------------
    def _uuid(self) -> str:
        n = next(self._ids)
        return f"{n:08x}-0000-4000-8000-{n:012x}"

    def _stamp(self) -> str:
        seconds = next(self._clock)
        return f"2025-11-03T10:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{seconds * 7 % 1000:03d}Z"

    def _base(self, kind: str) -> dict[str, Any]:
        uid = self._uuid()
        entry = {
            "parentUuid": self._parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session,
            "version": VERSION,
            "gitBranch": "main",
            "type": kind,
            "uuid": uid,
            "timestamp": self._stamp(),
        }
        self._parent = uid
        return entry

    # -- conversation -------------------------------------------------------------------------------------
    def prompt(self, text: str, blocks: bool = False) -> Transcript:
        self.noise("queue-operation")
        entry = self._base("user")
        content: Any = [{"type": "text", "text": text}] if blocks else text
        entry["message"] = {"role": "user", "content": content}
        self.lines.append(entry)
        self.noise("attachment")
        self.noise("api-request")
        return self

    def assistant(self, *blocks: dict[str, Any], message_id: str | None = None) -> Transcript:
        mid = message_id or f"msg_{next(self._ids):024x}"
        for block in blocks:
            entry = self._base("assistant")
            entry["message"] = {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [block],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 1200, "output_tokens": 80, "cache_read_input_tokens": 0},
            }
            entry["requestId"] = f"req_{mid[-12:]}"
            self.lines.append(entry)
        return self

    def say(self, text: str) -> Transcript:
        return self.assistant({"type": "text", "text": text})

    def tool(
        self, name: str, tool_input: dict[str, Any], result: str, is_error: bool = False, text: str | None = None
    ) -> Transcript:
        """An assistant tool_use (optionally preceded by a text block of the same message) and its result."""
        tid = f"toolu_{next(self._ids):020x}"
        blocks: list[dict[str, Any]] = []
        if text:
            blocks.append({"type": "text", "text": text})
        blocks.append({"type": "tool_use", "id": tid, "name": name, "input": tool_input})
        self.assistant(*blocks)
        entry = self._base("user")
        block: dict[str, Any] = {"tool_use_id": tid, "type": "tool_result", "content": result}
        if is_error:
            block["is_error"] = True
        entry["message"] = {"role": "user", "content": [block]}
        entry["toolUseResult"] = {"stdout": result, "stderr": "", "interrupted": False}
        self.lines.append(entry)
        return self

    def hook_feedback(self, reason: str) -> Transcript:
        entry = self._base("user")
        entry["isMeta"] = True
        entry["message"] = {"role": "user", "content": f"Stop hook feedback:\n{reason}"}
        self.lines.append(entry)
        return self

    def stop_hook_context(self, reason: str) -> Transcript:
        """A Stop hook's additionalContext as Claude Code 2.1.332 keeps it: the hook's run, then an attachment
        line (no user line): how gate's block reaches the model now (gate.hook.claude_code_stop)."""
        use = f"{next(self._ids):08x}-0000-4000-8000-000000000000"
        for attachment in (
            {"type": "hook_success", "hookName": "Stop", "toolUseID": use, "hookEvent": "Stop", "content": "",
             "stdout": json.dumps({"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": reason}}),
             "stderr": "", "exitCode": 0, "command": "gate-hook # memory-gate", "durationMs": 40},
            {"type": "hook_additional_context", "content": [reason], "hookName": "Stop", "toolUseID": use,
             "hookEvent": "Stop"},
        ):
            entry = self._base("attachment")
            entry["attachment"] = attachment
            self.lines.append(entry)
        return self

    def noise(self, kind: str) -> Transcript:
        """A line the reader must skip; some carry a `message` on purpose."""
        base = {"type": kind, "sessionId": self.session, "timestamp": self._stamp()}
        if kind == "attachment":
            base["attachment"] = {
                "type": "hook_additional_context",
                "content": ["MEMORY SEARCH REQUIRED: topic shift."],
                "hookName": "UserPromptSubmit",
            }
        elif kind == "api-request-blob":
            base["message"] = {"role": "user", "content": "UserPromptSubmit hook additional context: remember X"}
            base["request"] = {"messages": [{"role": "user", "content": [{"type": "text", "text": "old"}]}]}
        elif kind == "api-request":
            base["message"] = {"role": "user", "content": "request summary"}
        elif kind == "system":
            base.update({"subtype": "informational", "content": "Running hook", "level": "info"})
        elif kind == "queue-operation":
            base.update({"operation": "dequeue"})
        elif kind == "last-prompt":
            base["message"] = {"role": "user", "content": "a prompt that is not this turn's"}
        elif kind == "cost-state":
            base.update({"costUSD": 0.01, "message": {"role": "assistant", "content": "cost"}})
        elif kind == "file-history-snapshot":
            base.update({"messageId": "x", "snapshot": {}, "isSnapshotUpdate": False})
        self.lines.append(base)
        return self

    def text(self) -> str:
        return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in self.lines)


FIX_ANSWER = "The cause was ROUND_UP in total(); I switched it to ROUND_HALF_EVEN and the tests pass now."


def fixed_bug_turn(cwd: str, *, store: bool = False, answer: str = FIX_ANSWER) -> Transcript:
    """The tests' standard consequential turn: a failing run, an edit, a passing run, the cause stated —
    with the noise lines the CLI writes around it. `store`: the agent also ran `gate remember`."""
    t = Transcript(cwd=cwd)
    t.prompt("The ledger totals are off by a cent, fix it")
    t.noise("attachment").noise("system")
    t.tool("Read", {"file_path": "src/ledger.py"}, "def total(...): ...")
    t.tool("Bash", {"command": "pytest tests/test_ledger.py"}, "1 failed, 11 passed", is_error=True)
    t.tool("Edit", {"file_path": "src/ledger.py", "old_string": "ROUND_UP", "new_string": "ROUND_HALF_EVEN"}, "ok")
    t.tool("Bash", {"command": "pytest tests/test_ledger.py"}, "12 passed in 0.4s")
    if store:
        t.tool("Bash", {"command": 'gate remember "Ledger must round half-even" --kind fix'}, "m-1a2b3c")
    t.noise("api-request-blob")
    t.say(answer)
    return t
