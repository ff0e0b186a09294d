"""Claude Code's auto memory as gate memories: each topic file in the directory becomes one memory.

A topic file is Markdown with front matter (`name`, `description`, and the type: `metadata.type` since
2.1.3xx, a top-level `type` before; Claude Code reads both, the nested one winning). MEMORY.md, at any depth,
is the index Claude Code loads at session start, not a memory. Files under `team/` are the ones Claude Code
keeps in its team memory directory. As Claude Code's own memory scan: every `*.md` file beneath the directory.

The description is the title (Claude Code writes it as the one line that decides relevance); the file's text
is the body, with a last line naming the source file and its date; the memory's date is the file's
`modified` stamp when it has one, else its modification time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from gate.claude_code import INDEX, topic_files
from gate.importers.frontmatter import FrontMatterError, split
from gate.importers.mapping import TYPES, map_claude_memory
from gate.importers.plan import Item, digest, iso_date, title_and_rest
from gate.memory.model import Memory, now_iso
from gate.render import counted

TAG = "claude-memory"
MAX_BYTES = 1 << 20  # a memory is one fact; Claude Code itself reads far less of a topic file
_LINK = re.compile(r"\]\(([^)\s]+\.md)\)")
_HEADING = re.compile(r"^#{1,6}\s+")


@dataclass
class Scan:
    items: list[Item]
    source_prefixes: dict[str, str]  # new id -> the id prefix every version of its file shares
    index_note: str  # what MEMORY.md holds, for the report ("" when there is none)


def _date_of(value: Any) -> str | None:
    """A front matter `modified` stamp as an ISO timestamp, or None when it does not parse."""
    if isinstance(value, datetime):
        return iso_date(value.timestamp()) if value.tzinfo else value.replace(microsecond=0).isoformat() + "Z"
    if isinstance(value, date):
        return f"{value.isoformat()}T00:00:00Z"
    if isinstance(value, str):
        try:
            return _date_of(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
        except ValueError:
            return None
    return None


def _text(value: Any) -> str | None:
    """A front matter value as Claude Code takes a description: text, or a number or yes/no written out."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    return None


def _first_line(body: str) -> str | None:
    """Claude Code's fallback description: the first non-empty line, heading marks removed, 120 characters."""
    for line in body.splitlines():
        text = _HEADING.sub("", line).strip()
        if text:
            return text[:120]
    return None


def read_topic_file(path: Path, directory: Path, *, team: bool, rules: dict[str, Any]) -> tuple[Item, str]:
    """The planned memory of one topic file (or why it cannot be one), and its source-file id prefix."""
    relative = path.relative_to(directory).as_posix()
    source_key = digest(str(directory), relative)[:6]
    item = Item(relative, "?")
    try:
        stat = path.stat()
        if stat.st_size > MAX_BYTES:
            item.refuse(f"{stat.st_size} bytes: larger than a memory can be ({MAX_BYTES} bytes)")
            return item, ""
        raw = path.read_bytes()
    except OSError as error:
        item.refuse(f"cannot read it: {error.strerror or error}")
        return item, ""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        item.refuse(f"not UTF-8 text ({error.reason} at byte {error.start})")
        return item, ""
    try:
        front, body = split(text)
    except FrontMatterError as error:
        item.refuse(f"malformed front matter: {error}")
        return item, ""
    front = front or {}
    nested = front.get("metadata") if isinstance(front.get("metadata"), dict) else {}
    metadata = {**front, **nested}
    memory_type = metadata.get("type")
    if memory_type is not None and memory_type not in TYPES:
        item.origin = str(memory_type)
        item.refuse(f"unknown type {str(memory_type)[:40]!r} (Claude Code's types: {', '.join(TYPES)})")
        return item, ""
    item.origin = memory_type or "no type"
    body = body.strip()
    description = _text(front.get("description"))
    title, full = title_and_rest(description or _first_line(body) or _text(front.get("name")) or path.stem)
    created = _date_of(metadata.get("modified")) or iso_date(stat.st_mtime)
    in_team_dir = relative.split("/", 1)[0] == "team"
    mapped = map_claude_memory(
        memory_type, f"{description or ''}\n{body}", in_team_dir=in_team_dir, team=team, rules=rules
    )
    provenance = f"Imported from Claude Code's auto memory: {relative}, dated {created[:10]}."
    item.why = mapped.why
    item.memory = Memory(
        id=f"cm-{source_key}-{digest(raw)[:10]}",
        kind=mapped.kind,
        title=title,
        body="\n\n".join(part for part in (full, body, provenance) if part),
        tags=[TAG],
        scope=mapped.scope,
        source="agent",
        created=created,
        updated=now_iso(),
    )
    return item, f"cm-{source_key}-"


def index_note(directory: Path) -> str:
    """What MEMORY.md holds: links to topic files (imported through them), and lines of its own (not imported)."""
    try:
        lines = (directory / INDEX).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    links = [m.group(1) for line in lines for m in _LINK.finditer(line)]
    missing = sorted({link for link in links if not (directory / link).is_file()})
    notes = [line for line in lines if line.strip() and not _LINK.search(line) and not line.lstrip().startswith("#")]
    parts = [f"{INDEX}: the index Claude Code loads at session start, {counted(len(links), 'link')} to topic files"]
    if missing:
        parts.append(f"{len(missing)} of them to files that are not there ({', '.join(missing[:5])})")
    if notes:
        lines_are = "line is a note" if len(notes) == 1 else "lines are notes"
        parts.append(f"{len(notes)} {lines_are} of its own, not a link: not imported (`gate remember` what matters)")
    return "; ".join(parts)


def scan(directory: Path, *, team: bool, rules: dict[str, Any]) -> Scan:
    items, prefixes = [], {}
    for path in topic_files(directory):
        item, prefix = read_topic_file(path, directory, team=team, rules=rules)
        items.append(item)
        if item.memory is not None:
            prefixes[item.memory.id] = prefix
    return Scan(items, prefixes, index_note(directory))
