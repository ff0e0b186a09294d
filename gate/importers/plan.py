"""An import as a list of planned memories: each checked alone, then the new ones written one whole file each.

Every imported memory's id carries a hash of its source, so a second run finds it already there and imports
nothing twice, whatever was edited or forgotten in gate since. A planned memory is refused on its own (bad
front matter, unknown type, not UTF-8, a credential inside, anything `gate remember` would refuse) with one
line that says why; the rest are imported.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from gate.errors import GateError
from gate.memory.model import TITLE_MAX, Memory
from gate.memory.store.importing import ImportInterrupted
from gate.memory.store.secrets import refuse_secrets, text_fields
from gate.memory.store.store import Store


@dataclass
class Item:
    """One memory to import, or the reason its source cannot be."""

    source: str  # where it comes from, for the report: "feedback_testing.md", "CLAUDE.md § Testing, bullet 2"
    origin: str  # what it was there: a Claude Code memory type, "no type", "bullet"
    memory: Memory | None = None
    why: str = ""  # why this kind
    error: str = ""
    status: str = "new"  # new | exists | refused | imported
    existing: str = ""  # the id already in the store (exists)
    supersedes: list[str] = field(default_factory=list)

    def refuse(self, reason: str) -> None:
        self.status, self.error = "refused", reason

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"source": self.source, "origin": self.origin, "status": self.status}
        if self.memory is not None and self.status != "refused":
            memory = self.memory
            data.update(id=memory.id, kind=memory.kind, scope=memory.scope, title=memory.title, date=memory.date)
            data["why"] = self.why
        if self.existing:
            data["existing"] = self.existing
        if self.supersedes:
            data["supersedes"] = self.supersedes
        if self.error:
            data["error"] = self.error
        return data


IMPORTED_PREFIXES = ("cm-", "md-")  # ids of memories imported from Claude Code's auto memory, from CLAUDE.md


def digest(*parts: str | bytes) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part if isinstance(part, bytes) else part.encode("utf-8", "surrogateescape"))
        hasher.update(b"\x00")
    return hasher.hexdigest()


def iso_date(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def one_line(text: str) -> str:
    return " ".join(text.split())


def title_and_rest(text: str) -> tuple[str, str]:
    """A title of at most TITLE_MAX characters from one line of text, and the whole text when it was cut."""
    line = one_line(text)
    if len(line) <= TITLE_MAX:
        return line, ""
    cut = line[: TITLE_MAX - 1]
    cut = cut[: cut.rfind(" ")] if " " in cut[TITLE_MAX // 2 :] else cut
    return cut.rstrip(" ,;:") + "…", line


def check(store: Store, items: list[Item], source_prefixes: dict[str, str] | None = None) -> None:
    """Mark each item new, already there, or refused (with the reason, which never quotes a secret).

    An id ends with the hash of its source's content: the same content under any name is there already.
    `source_prefixes` maps an id to the prefix every version of its source file shares: an active memory
    imported from an earlier version of the file is superseded by the new one."""
    existing = store.existing_ids()
    by_hash = {i.rsplit("-", 1)[-1]: i for i in existing if i.startswith(IMPORTED_PREFIXES)}
    for item in items:
        if item.status == "refused" or item.memory is None:
            continue
        memory = item.memory
        memory.project = memory.project or store.paths.key
        try:
            memory.validate()
            refuse_secrets(text_fields(memory), store.paths.root)
        except GateError as error:
            item.refuse(str(error).replace("; nothing was written", ""))
            continue
        same = by_hash.get(memory.id.rsplit("-", 1)[-1])
        if same:
            item.status, item.existing = "exists", same
            continue
        by_hash[memory.id.rsplit("-", 1)[-1]] = memory.id
        prefix = (source_prefixes or {}).get(memory.id)
        if prefix:
            item.supersedes = sorted(i for i in existing if i.startswith(prefix) and _active(store, i))


def _active(store: Store, memory_id: str) -> bool:
    try:
        return store.get(memory_id).status == "active"
    except GateError:
        return False


def apply(store: Store, items: list[Item]) -> None:
    """Write every new item; one that fails now (e.g. the disk filled) is reported and the rest go on.
    Interrupted (SIGINT), it says how many it wrote: each is whole, and a run again skips them (ids end with
    the hash of their content)."""
    todo = [item for item in items if item.status == "new" and item.memory is not None]
    try:
        for item in todo:
            assert item.memory is not None
            try:
                store.remember(item.memory, supersedes=item.supersedes)
            except (GateError, OSError) as error:
                item.refuse(f"not written: {error}")
                continue
            item.status = "imported"
    except KeyboardInterrupt:
        # counted on disk: the one being written when the signal came may be there (its file is whole) or not
        written = sum(1 for item in todo if item.memory is not None and store.locate(item.memory.id) is not None)
        raise ImportInterrupted(written, len(todo), matched="each memory's id is the hash of its content") from None


def counts(items: list[Item]) -> dict[str, int]:
    result = {"new": 0, "imported": 0, "exists": 0, "refused": 0}
    for item in items:
        result[item.status] += 1
    return result


def report_lines(items: list[Item], dry_run: bool) -> list[str]:
    """One line per item (the mapping and the rule behind it with --dry-run), then the totals."""
    width = max((len(item.source) for item in items), default=0)
    lines = []
    for item in items:
        head = f"  {item.source:<{width}}  "
        if item.status == "refused" or item.memory is None:
            lines.append(f"{head}refused: {item.error}")
            continue
        memory = item.memory
        title = memory.title if len(memory.title) <= 70 else memory.title[:69] + "…"
        outcome = {
            "new": f"would import as {memory.id}",
            "imported": f"imported as {memory.id}",
            "exists": f"already imported ({item.existing})",
        }[item.status]
        if item.supersedes:
            outcome += f", superseding {', '.join(item.supersedes)}"
        why = f"  [{item.why}]" if dry_run and item.why else ""
        lines.append(f'{head}{item.origin} → {memory.kind}, {memory.scope}  "{title}"  {outcome}{why}')
    total = counts(items)
    done = f"would import {total['new']}" if dry_run else f"imported {total['imported']}"
    summary = f"{done}, already imported {total['exists']}, refused {total['refused']}"
    lines.append(summary + (" (dry run: nothing was written)" if dry_run else ""))
    return lines
