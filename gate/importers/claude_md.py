"""The bullets of a CLAUDE.md section as gate memories (directives, per rules/import.toml); the file is only read.

A section is chosen by its heading (`--section Testing` for `## Testing`, any level, case ignored) and runs to
the next heading of the same or a higher level, its subsections included. Each top-level list item becomes one
memory: its text the title, what is nested under it (sub-items, continued paragraphs, code) the body. Lines
inside code fences are never taken for headings or items.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate.errors import GateError, ValidationError
from gate.importers.plan import Item, digest, iso_date, one_line, title_and_rest
from gate.memory.model import Memory, now_iso

TAG = "claude-md"
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_ITEM = re.compile(r"^([ \t]*)(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$")
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)")


@dataclass
class Heading:
    level: int
    text: str
    line: int  # index of the heading line


@dataclass
class Bullet:
    text: str
    body: list[str] = field(default_factory=list)


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def headings(lines: list[str]) -> list[Heading]:
    found, fenced = [], False
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match:
            found.append(Heading(len(match.group(1)), match.group(2).strip(), number))
    return found


def normalize(heading: str) -> str:
    return one_line(heading.strip().lstrip("#").strip().rstrip(":")).casefold()


def section_lines(lines: list[str], all_headings: list[Heading], heading: Heading) -> list[str]:
    following = [h.line for h in all_headings if h.line > heading.line and h.level <= heading.level]
    return lines[heading.line + 1 : following[0] if following else len(lines)]


def bullets(lines: list[str]) -> list[Bullet]:
    """The top-level list items of a section's lines, each with what is nested under it."""
    items: list[Bullet] = []
    current: Bullet | None = None
    base: int | None = None
    blank = fenced = False
    for line in lines:
        indent = _indent(line)
        if _FENCE.match(line) or fenced:
            opens_here = bool(_FENCE.match(line))
            inside = current is not None and base is not None and (indent > base or (fenced and not opens_here))
            if current is not None and inside:
                current.body.append(line)
            elif opens_here and not fenced:
                current = None  # code at the list's own level ends the list
            fenced = fenced != opens_here
            continue
        if not line.strip():
            blank = True
            continue
        match = _ITEM.match(line)
        if _HEADING.match(line):
            current, blank = None, False  # a subsection's heading; its items are top-level too
            continue
        if match and (base is None or indent <= base):
            base = indent if base is None else min(base, indent)
            current = Bullet((match.group(2) or "").strip())
            items.append(current)
        elif current is not None and base is not None and indent > base:
            if match or blank or current.body:
                current.body.append(line)
            else:
                current.text += " " + line.strip()  # the item's text wraps onto this line
        else:
            current = None  # a paragraph at the list's level ends it
        blank = False
    return [item for item in items if item.text]


def _headline(text: str, nested: str) -> str:
    """An item that only introduces its sub-items ("Migrations:") is said with them: "Migrations: a; b"."""
    if not text.endswith(":") or not nested:
        return text
    subitems = [_ITEM.match(line) for line in nested.splitlines() if line.strip()]
    if not all(match and not match.group(1) for match in subitems):
        return text  # not a plain list of sub-items
    return f"{text} {'; '.join((m.group(2) or '').strip() for m in subitems if m)}"


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        home = Path.home().resolve()
        resolved = path.resolve()
        return f"~/{resolved.relative_to(home).as_posix()}" if resolved.is_relative_to(home) else str(resolved)


def read_sections(path: Path, wanted: list[str], root: Path, *, scope: str, rules: dict[str, Any]) -> list[Item]:
    """The planned memories of the chosen sections' bullets. Raises GateError for a file that cannot be read
    or a section that is not there (naming the sections that are)."""
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8").removeprefix("\ufeff")
        stat = path.stat()
    except FileNotFoundError:
        raise GateError(f"no such file: {path}") from None
    except UnicodeDecodeError as error:
        raise ValidationError(
            f"{path} is not UTF-8 text ({error.reason} at byte {error.start}); nothing was imported"
        ) from None
    except OSError as error:
        raise GateError(f"cannot read {path}: {error.strerror or error}") from None
    lines = text.replace("\r\n", "\n").split("\n")
    found = headings(lines)
    label = _display(path, root)
    if not wanted:
        raise ValidationError(f"choose the section(s) of {label} to import with --section HEADING",
                              hint=_listing(lines, found))
    chosen = [h for h in found if normalize(h.text) in {normalize(w) for w in wanted}]
    missing = [w for w in wanted if normalize(w) not in {normalize(h.text) for h in chosen}]
    if missing:
        raise ValidationError(f"{label} has no section {missing[0]!r}", hint=_listing(lines, found))
    kind = str(rules.get("claude_md", {}).get("kind", "directive"))
    created = iso_date(stat.st_mtime)
    items = []
    for heading in chosen:
        for number, bullet in enumerate(bullets(section_lines(lines, found, heading)), start=1):
            nested = textwrap.dedent("\n".join(bullet.body)).strip()
            title, full = title_and_rest(_headline(bullet.text, nested))
            provenance = f'Imported from {label}, section "{heading.text}", dated {created[:10]}.'
            item = Item(f"{label} § {heading.text}, bullet {number}", "bullet", why=f"CLAUDE.md bullets are {kind}s")
            item.memory = Memory(
                id=f"md-{digest(title, full, nested)[:12]}",
                kind=kind,
                title=title,
                body="\n\n".join(part for part in (full, nested, provenance) if part),
                tags=[TAG],
                scope=scope,
                source="human",
                created=created,
                updated=now_iso(),
            )
            items.append(item)
    return items


def _listing(lines: list[str], found: list[Heading]) -> str:
    if not found:
        return "it has no headings (# …) to choose a section by"
    counts = [(h, len(bullets(section_lines(lines, found, h)))) for h in found]
    return "its sections: " + "; ".join(f"{'#' * h.level} {h.text} ({n} bullet{'s' * (n != 1)})" for h, n in counts)
