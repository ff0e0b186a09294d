"""Claude Code's memory types to gate's kinds and scopes.

Kinds come from rules/import.toml. Scopes follow Claude Code's own privacy rule for each type (its memory
prompt gives each a scope): `user` memories are always private to the user, so they go to gate's user scope
(the user's, in every project); `feedback` defaults to private and is team-wide only as a project convention;
`project` leans to team and `reference` is usually team. Gate writes to the team store (in the repository,
seen by everyone) only when asked: with --team, project and reference memories go there, and so do
memories Claude Code itself kept in its team directory (except `user` ones); without --team, all but `user`
stay private.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TYPES = ("user", "feedback", "project", "reference")
TEAM_LEANING = ("project", "reference")


@dataclass(frozen=True)
class Mapped:
    kind: str
    scope: str
    why: str  # the rule that chose the kind, for --dry-run


def _table(rules: Mapping[str, Any], *path: str) -> Mapping[str, Any]:
    node: Any = rules
    for key in path:
        node = node.get(key, {}) if isinstance(node, Mapping) else {}
    return node if isinstance(node, Mapping) else {}


def _matches(rules: Mapping[str, Any], table: str, text: str) -> str | None:
    """The first pattern of rules[claude_memory][table] found in the text, as the words it matched."""
    for pattern in _table(rules, "claude_memory", table).get("patterns", []):
        found = re.search(pattern, text, re.IGNORECASE)
        if found:
            return found.group(0)
    return None


def map_claude_memory(
    memory_type: str | None, text: str, *, in_team_dir: bool, team: bool, rules: Mapping[str, Any]
) -> Mapped:
    """Kind and scope for one auto-memory file of the given type (None: the file has no type)."""
    kinds = _table(rules, "claude_memory", "kinds")
    kind = str(kinds.get(memory_type or "untyped", "finding"))
    why = f"the kind for {memory_type} memories" if memory_type else "the kind for a file without a type"
    second = {"feedback": "feedback_preference", "project": "project_decision"}.get(memory_type or "")
    if second:
        words = _matches(rules, second, text)
        if words:
            kind = str(_table(rules, "claude_memory", second).get("kind", kind))
            why = f'it says "{words}"'
    if memory_type == "user":
        scope = "user"
    elif team and (memory_type in TEAM_LEANING or in_team_dir):
        scope = "team"
    else:
        scope = "private"
    return Mapped(kind, scope, why)
