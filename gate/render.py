"""What the agent reads (hot path): framing, budgets, provenance, and defusing memory text.

Memory text is data, never instructions: it is flattened to single lines, stripped of control characters,
and any line that imitates gate's own framing ("MEMORY CHECK", "MEMORY SEARCH REQUIRED", a system tag) is
defused, so a stored memory cannot speak with gate's voice. Every injection is cut to its budget, and
always below Claude Code's 10,000-character limit (beyond which context is moved to a file).
"""

from __future__ import annotations

import os
import sys

from gate.literals import IGNORECASE_FOLD, CompiledOnUse

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

HARD_LIMIT_CHARS = 9_500
CHARS_PER_TOKEN = 4
TITLE_CHARS = 200
BODY_CHARS = 400

# Control, line-separator, zero-width and bidi-override characters -> space (a translate table: the same
# character class as a regex costs a hook ~0.8 ms to compile).
_CONTROL = dict.fromkeys(
    [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, 0x2028, 0x2029, *range(0x200B, 0x2010), *range(0x202A, 0x202F),
     *range(0x2066, 0x206A)],
    " ",
)
# Compiled on first use (from a kept program), and only for text that could hold it.
_FRAMING = r"(?i)(memory\s*(check|search\s*required)|system[-_ ]?reminder|</?\s*(system|memories?)\b)"
_FRAMING_RE = CompiledOnUse(_FRAMING)
_SHELL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-")


def counted(count: int, one: str, many: str | None = None) -> str:
    """"1 memory", "2 memories": a count with its noun in the number it takes (`many` default: one + "s")."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def budget_chars(tokens: int) -> int:
    return min(HARD_LIMIT_CHARS, max(200, tokens * CHARS_PER_TOKEN))


def clean(text: str, limit: int) -> str:
    """One line of memory text, safe to place inside gate's framing."""
    flat = " ".join(text.translate(_CONTROL).split())
    # Every alternative of _FRAMING holds "memor" or "system" (case-insensitively: "ſyſtem" counts too).
    lowered = flat.lower() if flat.isascii() else flat.translate(IGNORECASE_FOLD).lower()
    if "memor" in lowered or "system" in lowered:
        flat = _FRAMING_RE.sub(lambda m: "«" + m.group(0).replace("<", "").replace(">", "") + "»", flat)
    flat = flat.replace("<", "‹").replace(">", "›")
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def provenance_mark(record: dict[str, Any]) -> str:
    source = record.get("source", "agent")
    scope = record.get("scope", "private")
    marks = []
    if source == "human":
        marks.append("[human]")
    elif source == "user":
        marks.append("[user]")
    if scope == "team":
        marks.append("[team]")
    return (" " + " ".join(marks)) if marks else ""


def index_line(record: dict[str, Any], *, with_body: bool = False, extra: str = "", root: str | None = None) -> str:
    """One delivered memory; with the project `root`, anchored files are re-checked and a stale mark added."""
    if root is not None and record.get("anchors"):
        from gate.memory.cues.staleness import stale_mark

        mark = stale_mark(record, root)
        extra += f" [{clean(mark, 300)}]" if mark else ""  # file names come from a file a person may edit
    line = (
        # created is any text in a hand-edited or pulled team file ("\n</system>" fits in 10 characters)
        f"- {record['id']} · {record['kind']} · {clean(str(record.get('created', ''))[:10], 10)} · "
        f"{clean(record['title'], TITLE_CHARS)}{provenance_mark(record)}{extra}"
    )
    body = record.get("body") or ""
    if with_body and body:
        line += f"\n  {clean(body, BODY_CHARS)}"
    return line


class BudgetedItems:
    """The (id, text) items for fit(), each rendered only while the budget can still hold it: past the budget
    fit() drops an item and every one after it, so those are passed on unrendered, too long to fit (at 100,000
    memories the standing lists hold a hundred records; rendering each costs the hook ~50 µs). `text` is a line
    or a function that renders it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.items: list[tuple[str, str]] = []

    def add(self, memory_id: str, text: Any) -> None:
        if self.used > self.limit:
            self.items.append((memory_id, " " * (self.limit + 1)))  # dropped by fit(), as it would be anyway
            return
        line = text() if callable(text) else text
        self.used += len(line) + 1
        self.items.append((memory_id, line))

    def extend(self, items: list[tuple[str, str]]) -> None:
        for memory_id, line in items:
            self.add(memory_id, line)


def fit(
    header: list[str], items: Iterable[tuple[str, str]], footer: list[str], limit: int
) -> tuple[str, list[str], list[str]]:
    """Join header, as many (id, text) items as fit in `limit` characters, and footer.

    Returns the text, the ids that made it in, and the ids dropped at the budget (in order)."""
    used = sum(len(line) + 1 for line in header) + sum(len(line) + 1 for line in footer)
    lines = list(header)
    kept: list[str] = []
    dropped: list[str] = []
    for memory_id, text in items:
        if used + len(text) + 1 <= limit and not dropped:
            lines.append(text)
            kept.append(memory_id)
            used += len(text) + 1
        else:
            dropped.append(memory_id)
    return "\n".join([*lines, *footer]), kept, dropped


def _which(name: str) -> str | None:
    """shutil.which for one plain name, without importing shutil (~1.5 ms with what it pulls in)."""
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


# Set by a host whose agent runs its commands in a shell whose PATH need not be the hook's (Codex runs them
# through a login shell, `bash -lc`, which may reset PATH): then gate is named by its absolute path.
ABSOLUTE = False


def gate_command(python: str | None = None, absolute: bool | None = None) -> str:
    """How the agent's shell can run gate: plain `gate` if that resolves to this installation (the one beside
    `python`, by default the running interpreter: a hook's messages are rendered by the hook's own), unless
    `absolute` (default: ABSOLUTE) asks for the installation's own path whatever PATH holds."""
    python = python or sys.executable
    absolute = ABSOLUTE if absolute is None else absolute
    script = os.path.join(os.path.dirname(python), "gate")
    if os.path.exists(script):
        if not absolute:
            found = _which("gate")
            if found and os.path.realpath(found) == os.path.realpath(script):
                return "gate"
        return _shell_quote(script)
    if absolute:
        return f"{_shell_quote(python)} -m gate.cli"
    return "gate" if _which("gate") else f"{_shell_quote(python)} -m gate.cli"


def _shell_quote(word: str) -> str:
    """shlex.quote, importing shlex (and compiling its regex) only for a path that needs quoting."""
    if word and all(char in _SHELL_SAFE for char in word):
        return word
    import shlex

    return shlex.quote(word)
