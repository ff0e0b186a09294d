"""The search the agent must run (hot path; issue 29): recall asks for it, the first change of the turn waits for it.

UserPromptSubmit (`ask`): where recall fires — a topic shift (in a store that holds something to find), or
memories past the floor — its context keeps its hits and asks the agent for a search in its own words of what
the request needs, naming `gate search`; so does a follow-up whose hits all came earlier in the session
([search_first] ask_when_delivered). The ledger keeps the request for this turn (this prompt's id).

PreToolUse (`check`): the agent's `gate search` or `gate show` (its Bash call, seen here) meets the request. Until
then, the first tool call of the turn that changes something — an edit, a Bash command line that is not
read-only (gate/commandline.py), an MCP tool whose name says it writes (rules/triggers.toml [search_first]
change_tools) — is refused once with one line naming the search (setting agent_search = refuse), or runs and is
followed by that line (remind); off: the agent is only asked. Never twice in a turn, never
in a muted session, never inside a subagent (the PreToolUse entry routes those elsewhere), and never when this
check fails: the entry lets the call pass. A replay cannot retry a refused call: there the refusal is recorded,
not given.
"""

from __future__ import annotations

from gate.gates.base import HookContext, Outcome, additional_context
from gate.session.ledger import Ledger
from gate.session.mute import muted_by

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

GATE = "agent_search"
ASKING_SKIPS = frozenset({"SKIP_NO_HITS", "SUPPRESSED_ALREADY_DELIVERED"})  # a shift whose search found nothing new


def _prompt_id(ctx: HookContext) -> str:
    value = ctx.event.get("prompt_id")
    return value if isinstance(value, str) else ""


def _gate() -> str:
    from gate.render import gate_command

    return gate_command()


# --- UserPromptSubmit ---------------------------------------------------------------------------------------------
def ask(ctx: HookContext, ledger: Ledger, outcome: Outcome) -> Outcome:
    """The recall gate's answer, asking for the agent's own search where recall fired; the request noted."""
    fired = outcome.decision == "fired" and outcome.gate == "recall"
    shift = bool(outcome.extra.get("shift")) and outcome.reason in ASKING_SKIPS
    rules = ctx.rules("recall").get("search_first", {})
    # A follow-up whose hits all came earlier in the session: recall found memory on the request, so the agent
    # searches for what else it needs (rules/recall.toml [search_first] ask_when_delivered).
    known = (not shift and outcome.reason == "SUPPRESSED_ALREADY_DELIVERED"
             and bool(rules.get("ask_when_delivered", False)))
    if not (fired or shift or known):
        return outcome
    if shift and ctx.index.num_docs() < int(rules.get("min_memories", 1)):
        return outcome  # nothing to find
    messages = ctx.rules("messages")["recall"]
    strictness = str(ctx.settings.get("agent_search", "refuse"))
    lines = [messages["agent_search"].format(gate=_gate())]
    if strictness in ("refuse", "remind"):
        lines.append(messages[f"agent_search_{strictness}"])
    text = "\n".join(lines)  # one line per template (what the agent reads is gate's framing, line by line)
    ledger.ask_search(_prompt_id(ctx), outcome.reason)
    outcome.extra["search_asked"] = True
    if fired and outcome.output is not None:
        existing = str(outcome.output["hookSpecificOutput"]["additionalContext"])
        combined = f"{existing}\n{text}"
        outcome.output = additional_context("UserPromptSubmit", combined)
        outcome.chars = len(combined)
        ledger.injected_chars += len(text) + 1
        return outcome
    header = messages["header"].format(reason=messages["reason_delivered" if known else "reason_shift"])
    combined = f"{header}\n{text}"
    ledger.injected_chars += len(combined)
    # Nothing delivered, for the reason recall gives; what was done is the ask.
    return Outcome("asked", outcome.reason, output=additional_context("UserPromptSubmit", combined),
                   gate="recall", suppressed=outcome.suppressed, dropped=outcome.dropped, chars=len(combined),
                   extra=outcome.extra)


# --- PreToolUse ---------------------------------------------------------------------------------------------------
class Check:
    """What the check found at one tool call: "seen" (the agent's search), "refused" or "reminded"."""

    __slots__ = ("found", "line", "tool")

    def __init__(self, found: str, tool: str, line: str = "") -> None:
        self.found = found
        self.tool = tool
        self.line = line

    def refusal(self, ctx: HookContext) -> Outcome | None:
        """The answer that refuses the call (None unless refused, and never in a replay: nothing retries there)."""
        if self.found != "refused" or ctx.transcript_end is not None:
            return None
        output = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                         "permissionDecisionReason": self.line}}
        return Outcome("refused", "REFUSED_SEARCH_FIRST", output=output, gate=GATE, chars=len(self.line),
                       extra={"tool": self.tool, "search_first": "refused"})

    def attach(self, outcome: Outcome) -> Outcome:
        """The tool call's own answer (its anchors), with what the check found; a reminder follows the call."""
        outcome.extra["search_first"] = self.found
        if self.found != "reminded":
            return outcome
        if outcome.output is None:
            return Outcome("reminded", "REMINDED_SEARCH_FIRST", output=additional_context("PreToolUse", self.line),
                           gate=GATE, chars=len(self.line), extra=outcome.extra)
        combined = f"{outcome.output['hookSpecificOutput']['additionalContext']}\n\n{self.line}"
        outcome.output = additional_context("PreToolUse", combined)
        outcome.chars = len(combined)
        return outcome


def _changing_tool(tool: str, rules: dict[str, Any]) -> bool:
    """An MCP tool whose name says it changes something ([search_first] change_tools)."""
    if not tool.startswith("mcp__"):
        return False
    import re

    return any(isinstance(p, str) and re.search(p, tool) for p in rules.get("change_tools", ()))


def check(ctx: HookContext, ledger: Ledger, triggers: dict[str, Any]) -> Check | None:
    """Whether this main-conversation tool call meets, or must wait for, the turn's search (None: neither).
    `triggers`: rules/triggers.toml, which every tool call has loaded already ([tools], [search_first])."""
    request = ledger.open_search_request(_prompt_id(ctx))
    if request is None:
        return None
    tool = ctx.event.get("tool_name")
    tool_input = ctx.event.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return None
    tools = triggers.get("tools", {})
    run = tools.get("run", {})
    if tool in run:
        command = tool_input.get(run[tool])
        if not isinstance(command, str) or not command.strip():
            return None
        from gate.commandline import read_command

        rules = triggers.get("search_first", {})
        line = read_command(command, rules)
        if any(sub in rules.get("search_commands", ("search", "show")) for sub in line.gate_subcommands):
            ledger.note_search_seen()
            return Check("seen", tool)
        if not line.changes:
            return None
    elif tool not in tools.get("edit", ()) and not _changing_tool(tool, triggers.get("search_first", {})):
        return None  # a read, a search of the files, a spawn, an MCP tool that only reads: no change
    strictness = str(ctx.settings.get("agent_search", "refuse"))
    if strictness not in ("refuse", "remind") or request.get("refused") or request.get("reminded"):
        return None
    if muted_by(ctx.paths, ledger.muted):
        return None
    messages = ctx.rules("messages")["recall"]
    if strictness == "refuse":
        request["refused"] = True
        return Check("refused", tool, messages["search_first_refused"].format(gate=_gate()))
    request["reminded"] = True
    return Check("reminded", tool, messages["search_first_reminded"].format(gate=_gate()))
