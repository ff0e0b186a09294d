"""The write-back gate's words (hot path): the MEMORY CHECK a blocked Stop gives the agent, and the `gate remember`
line it and the next prompt's reminder (gate/gates/writeback/reminder.py) show. The texts: rules/messages.toml."""

from __future__ import annotations

from gate.render import clean, gate_command

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

    from gate.gates.base import HookContext

KIND_FOR_EVIDENCE = {
    "decision": "decision",
    "fix": "fix",
    "gotcha": "gotcha",
    "preference": "preference",
    "learning": "finding",
}
EDGE_FOR_KIND = {"fix": "fixes", "decision": "relates"}



def store_command(messages: dict[str, Any], kinds: list[str]) -> str:
    """The exact `gate remember` line the agent is shown, with the memory kind the evidence stands for."""
    primary = KIND_FOR_EVIDENCE.get(kinds[0], "finding") if kinds else "finding"
    edge = EDGE_FOR_KIND.get(primary)
    link_hint = messages["link_hint"].format(edge=edge) if edge else ""
    return str(messages["command"]).format(gate=gate_command(), kind=primary, link_hint=link_hint)


def render(ctx: HookContext, phrase: str, kinds: list[str], quotes: list[str]) -> str:
    messages = ctx.rules("messages")["writeback"]
    lines = [messages["header"].format(what=phrase), messages["evidence"]]
    lines += [f"  - \"{clean(quote, 200)}\"" for quote in quotes[:3]]
    lines += [
        messages["how"],
        store_command(messages, kinds),
        messages["related_hint"],
        messages["skip"],
        messages["done"],
    ]
    return "\n".join(lines)
