"""One turn of a Claude Code transcript (hot path, standard library only): what it holds (Turn: the prompt, the
assistant's texts, its tool calls and their results), what each `user` line is (classify_user), and the
collector that builds a Turn from its lines, newest first. Reading them from the end of the file:
gate/session/transcript.py; `gate replay` walks them forwards with the same classify_user.
"""

from __future__ import annotations

from gate.literals import CompiledOnUse

TYPE_CHECKING = False  # typing and dataclasses cost the hook milliseconds to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any

# Tools whose input names a file or directory the turn touched.
_PATH_TOOLS = frozenset({"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Grep", "Glob"})
_PATH_KEYS = ("file_path", "path", "notebook_path")

# User lines that are not something the user typed: hook feedback, interruption markers, the output of a
# local slash command, the caveat the CLI puts before such output.
# (Prefixes, not a regex: compiling one costs a hook process more than every startswith it replaces.)
_NOT_A_PROMPT = (
    "Stop hook feedback:", "[Request interrupted by user", "<local-command-stdout>", "<local-command-stderr>",
    "Caveat: The messages below were generated",
)
# Tools that hand work to a subagent: the subagent's final report comes back as their result, and counts as
# text of the turn (what the subagent settled is evidence for the parent's write-back gate).
_SPAWN_TOOLS = frozenset({"Agent", "Task"})
# A slash command the user ran: it starts a turn of its own, so it bounds the current one.
_COMMAND = r"<command-name>\s*([^<]*)</command-name>"
_COMMAND_RE = CompiledOnUse(_COMMAND)  # compiled from a kept program (gate/literals.py): no `re` import


class _Plain:
    """Value-object behaviour (repr, equality) for the small classes below, without dataclasses."""

    __slots__ = ()

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]


class ToolUse(_Plain):
    __slots__ = ("id", "input", "name", "seq")

    def __init__(self, id: str, name: str, input: dict[str, Any], seq: int = 0) -> None:
        self.id = id
        self.name = name
        self.input = input
        # Position in the turn, shared with ToolResult.seq, so "A happened before B" is decidable.
        self.seq = seq


class ToolResult(_Plain):
    __slots__ = ("is_error", "seq", "text", "tool_use_id")

    def __init__(self, tool_use_id: str, text: str, is_error: bool = False, seq: int = 0) -> None:
        self.tool_use_id = tool_use_id
        self.text = text
        self.is_error = is_error
        self.seq = seq


class Turn(_Plain):
    """What happened since the last real user prompt, in order."""

    __slots__ = (
        "assistant_texts", "cli_version", "complete", "from_fallback", "hook_feedback", "previous_reply", "prompt",
        "report", "tool_results", "tool_uses",
    )

    def __init__(
        self,
        prompt: str = "",
        assistant_texts: list[str] | None = None,
        tool_uses: list[ToolUse] | None = None,
        tool_results: list[ToolResult] | None = None,
        from_fallback: bool = False,
        complete: bool = False,
        hook_feedback: int = 0,
    ) -> None:
        self.prompt = prompt
        self.assistant_texts: list[str] = list(assistant_texts or [])
        self.tool_uses: list[ToolUse] = list(tool_uses or [])
        self.tool_results: list[ToolResult] = list(tool_results or [])
        self.from_fallback = from_fallback
        # True when the read reached the prompt (False: the turn was longer than max_bytes, or the file began).
        self.complete = complete
        # How many Stop-hook feedback lines the turn holds (a continuation after a block).
        self.hook_feedback = hook_feedback
        # The last text the assistant wrote before this turn's prompt (read_turn(previous_reply=True)): what
        # the prompt answers ("the second option", "yes, keep it local").
        self.previous_reply = ""
        # The report of a background subagent, when the turn's prompt is the task notification that brought it
        # (it is also the first of assistant_texts: what the subagent settled is text of this turn).
        self.report = ""
        # The Claude Code version on the turn's newest line ("" when none says): which Stop answer it takes
        # (gate/hook.py claude_code_stop).
        self.cli_version = ""

    def bash_commands(self) -> list[str]:
        return [
            str(use.input.get("command", ""))
            for use in self.tool_uses
            if use.name == "Bash" and isinstance(use.input.get("command"), str)
        ]

    def touched_files(self) -> list[str]:
        """Files and directories named by the turn's file tools, first touch first, without repeats."""
        seen: dict[str, None] = {}
        for use in self.tool_uses:
            if use.name not in _PATH_TOOLS:
                continue
            for key in _PATH_KEYS:
                value = use.input.get(key)
                if isinstance(value, str) and value.strip():
                    seen.setdefault(value.strip(), None)
        return list(seen)

    def result_for(self, tool_use_id: str) -> ToolResult | None:
        for result in self.tool_results:
            if result.tool_use_id == tool_use_id:
                return result
        return None

    @property
    def text(self) -> str:
        return "\n\n".join(self.assistant_texts)


def _block_text(content: Any) -> str:
    """Text of a message content: a string, or the text blocks of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(block.get("text", "")) for block in content if isinstance(block, dict) and block.get("type") == "text"
        ]
        return "\n".join(part for part in parts if part)
    return ""


# What a `user` line of a transcript is (classify_user): one answer shared by the hooks' backward reader and
# `gate replay`'s forward walk, so both agree on where a turn starts.
TOOL_RESULTS = "tool_results"  # the results of the assistant's tool calls
HOOK_FEEDBACK = "hook_feedback"  # "Stop hook feedback:": a Stop hook blocked and the turn goes on
COMPACT_SUMMARY = "compact_summary"  # the summary that opens the window after a compaction
INTERRUPTED = "interrupted"  # "[Request interrupted by user…": the turn ends here, without a Stop
NOT_A_PROMPT = "not_a_prompt"  # meta lines, local command output, empty content
PROMPT = "prompt"  # something the user typed
COMMAND = "command"  # a slash command the user ran (its text is the command's name)


def entry_text(entry: dict[str, Any]) -> str:
    """The text of a transcript line's message (its text blocks, joined)."""
    message = entry.get("message")
    return _block_text(message.get("content") if isinstance(message, dict) else None)


def is_stop_hook_context(entry: dict[str, Any]) -> bool:
    """A Stop hook's additionalContext as the transcript keeps it (an `attachment` line): how gate's block reaches
    the model in Claude Code (gate.hook.claude_code_stop), the turn going on as after "Stop hook feedback:". (The
    hooks' backward reader skips attachment lines unparsed; `gate replay`'s walk reads it as a block.)"""
    attachment = entry.get("attachment") if entry.get("type") == "attachment" else None
    return (isinstance(attachment, dict) and attachment.get("type") == "hook_additional_context"
            and attachment.get("hookEvent") == "Stop")


def classify_user(entry: dict[str, Any]) -> tuple[str, str]:
    """(role, text) of a `user` line; text is the prompt (or the command's name) for PROMPT and COMMAND."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content
    ):
        return TOOL_RESULTS, ""
    text = _block_text(content)
    if text.startswith("Stop hook feedback:"):
        return HOOK_FEEDBACK, ""
    if entry.get("isCompactSummary") is True:
        return COMPACT_SUMMARY, ""
    if text.lstrip().startswith("[Request interrupted by user"):
        return INTERRUPTED, ""
    if entry.get("isMeta") is True or not text.strip() or text.lstrip().startswith(_NOT_A_PROMPT):
        return NOT_A_PROMPT, ""
    command = _COMMAND_RE.search(text) if "<command-name>" in text else None
    if command:
        return COMMAND, command.group(1).strip()
    return PROMPT, text


class TurnCollector:
    """Receives the turn's entries newest first and builds the Turn in reading order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []  # newest first
        self.prompt = ""
        self.complete = False
        self.hook_feedback = 0
        self.cli_version = ""

    def feed(self, entry: dict[str, Any]) -> bool:
        """Take one entry; True when it is the prompt that opens the turn (reading stops)."""
        if not self.cli_version:  # newest first: the version the CLI runs now (a resumed session may have upgraded)
            version = entry.get("version")
            if isinstance(version, str):
                self.cli_version = version[:40]
        if entry.get("isSidechain") is True:
            return False  # a subagent's conversation, not this turn's
        kind = entry.get("type")
        message = entry.get("message")
        if kind == "system":
            # A compaction boundary ends what belongs to the turn; other system lines are noise.
            if entry.get("subtype") == "compact_boundary":
                self.complete = True
                return True
            return False
        if not isinstance(message, dict):
            return False
        content = message.get("content")
        if kind == "assistant":
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            if isinstance(content, list):
                for block in reversed(content):
                    if isinstance(block, dict):
                        self.events.append(("assistant", block))
            return False
        if kind != "user":
            return False
        role, text = classify_user(entry)
        if role == TOOL_RESULTS:
            for block in reversed(content):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self.events.append(("result", block))
            return False
        if role == HOOK_FEEDBACK:
            self.hook_feedback += 1
            return False
        if role == COMPACT_SUMMARY:
            self.complete = True  # the turn began before a compaction; its prompt is summarised away
            return True
        if role in (NOT_A_PROMPT, INTERRUPTED):
            return False
        self.prompt = text
        self.complete = True
        return True

    def turn(self) -> Turn:
        turn = Turn(prompt=self.prompt, complete=self.complete, hook_feedback=self.hook_feedback)
        turn.cli_version = self.cli_version
        turn.report = notification_report(self.prompt)
        if turn.report:  # a background subagent's report opens the turn: the turn's first text
            turn.assistant_texts.append(turn.report)
        spawns: set[str] = set()
        # A call a PreToolUse hook refused never ran (the search the agent must run, say): it is neither a run that
        # failed nor an edit; the call made again after it is the one that counts.
        refused = {str(block.get("tool_use_id", "")) for kind, block in self.events
                   if kind == "result" and _refused_by_hook(block)} - {""}
        for seq, (kind, block) in enumerate(reversed(self.events)):
            if refused and str(block.get("tool_use_id" if kind == "result" else "id", "")) in refused:
                continue
            if kind == "result":
                turn.tool_results.append(
                    ToolResult(
                        tool_use_id=str(block.get("tool_use_id", "")),
                        text=_result_text(block.get("content")),
                        is_error=block.get("is_error") is True,
                        seq=seq,
                    )
                )
                if turn.tool_results[-1].tool_use_id in spawns:
                    report = subagent_report(turn.tool_results[-1].text)
                    if report:
                        turn.assistant_texts.append(report)
            elif block.get("type") == "text":
                text = str(block.get("text", ""))
                if text.strip():
                    turn.assistant_texts.append(text)
            elif block.get("type") == "tool_use":
                tool_input = block.get("input")
                turn.tool_uses.append(
                    ToolUse(
                        id=str(block.get("id", "")),
                        name=str(block.get("name", "")),
                        input=tool_input if isinstance(tool_input, dict) else {},
                        seq=seq,
                    )
                )
                if turn.tool_uses[-1].name in _SPAWN_TOOLS:
                    spawns.add(turn.tool_uses[-1].id)
        return turn


REFUSED_MARK = " hook error: "  # 2.1.332: "PreToolUse:Edit hook error: <the hook's reason>", is_error true


def _refused_by_hook(block: dict[str, Any]) -> bool:
    if block.get("is_error") is not True:
        return False
    head = _result_text(block.get("content"))[:200].split("\n", 1)[0]
    return head.startswith("PreToolUse:") and REFUSED_MARK in head


def subagent_report(text: str) -> str:
    """A subagent's final report, from the spawn tool's result. 2.1.332 frames it ("[Subagent hand-back] …
    The report follows:", its lines indented, then "agentId: …" and usage); older CLIs return it bare. A
    background spawn's result only says it was launched: its report arrives later, as a task notification."""
    if text.lstrip().startswith("Async agent launched"):
        return ""
    _, framed, report = text.partition("The report follows:\n")
    if not framed:
        report = text
    report = report.split("\nagentId: ", 1)[0]
    return "\n".join(line[2:] if line.startswith("  ") else line for line in report.splitlines()).strip()


_NOTIFICATION = "<task-notification>"


def notification_report(prompt: str) -> str:
    """A background subagent's report, from the task notification that brings it back (2.1.332:
    `<task-notification>…<status>completed</status><summary>Agent "…" completed</summary><result>REPORT</result>
    …</task-notification>`, as a user message of its own). A background command's notification has no result:
    it is "" then, as for any other prompt."""
    if not prompt.lstrip().startswith(_NOTIFICATION):
        return ""
    _, found, rest = prompt.partition("<result>")
    if not found:
        return ""
    report = rest.rpartition("</result>")[0] if "</result>" in rest else rest.split("</task-notification>", 1)[0]
    return report.strip()


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return _block_text(content)
