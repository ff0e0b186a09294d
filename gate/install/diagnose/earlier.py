"""Gate's entries as an earlier gate wrote them: what `gate install` would change in one file's entries (a
matcher it no longer writes, an event it did not wire yet, an earlier committed command, an event wired twice),
for any agent whose hooks file keeps Claude Code's shape. The doctor reports them as one finding per file, with
the fix; the entries still run, so it is a warning, not a failure."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gate.install import wiring
from gate.install.diagnose.base import Check
from gate.install.wiring import EventSpec

# Events an earlier gate did not wire yet: Claude Code's SubagentStop, Codex's SubagentStart, Gemini's AfterTool.
# Their absence alone is an install of an earlier gate (a warning with the fix), not a broken one: every other
# event has been wired since the first gate, so its absence is a broken wiring (a failure).
ADDED_LATER = frozenset({"SubagentStop", "SubagentStart", "AfterTool"})

# (event, matcher or None, command) of one hook entry
Entry = tuple[str, Any, str]


def entries_of(data: Any) -> list[Entry]:
    """Gate's entries (those carrying its marker) in a parsed hooks document."""
    return [(e.event, e.group.get("matcher"), e.command) for e in wiring.find_gate_entries(data)]


def _shown(matcher: Any) -> str:
    return "none" if matcher is None else f'"{matcher}"' if isinstance(matcher, str) else repr(matcher)


def differences(entries: Iterable[Entry], events: tuple[EventSpec, ...],
                commands: dict[str, str] | None = None) -> list[str]:
    """What `gate install` would change in one file's entries, one phrase each ([] when nothing). `commands`:
    the committed command of each event, where the scope has one (a project file), so a portable command of
    another event or form is named; an interpreter's command differs by machine and is the wiring check's."""
    by_event: dict[str, list[tuple[Any, str]]] = {}
    for event, matcher, command in entries:
        by_event.setdefault(event, []).append((matcher, command))
    found: list[str] = []
    for spec in events:
        mine = by_event.get(spec.event, [])
        if not mine:
            found.append(f"{spec.event} is not wired")
            continue
        if len(mine) > 1:
            found.append(f"{spec.event} is wired {len(mine)} times")
        # the matcher found, not this gate's (a long expression: `gate install --dry-run` shows it)
        for matcher in sorted({_shown(m) for m, _ in mine if m != spec.matcher}):
            found.append(f"{spec.event}'s matcher is {matcher}, not this gate's" if spec.matcher is not None
                         else f"{spec.event} has the matcher {matcher}, which this gate does not write")
        if any(_earlier_command(command, commands.get(spec.event) if commands else None) for _, command in mine):
            found.append(f"{spec.event} runs an earlier gate's committed command")
    wired = {spec.event for spec in events}
    found += [f"{event} is wired, which this gate no longer wires" for event in by_event if event not in wired]
    return found


def _earlier_command(command: str, desired: str | None) -> bool:
    if command in wiring.EARLIER_PORTABLE or command in wiring.EARLIER_AGENT_PORTABLE:
        return True
    return desired is not None and command != desired and wiring.is_portable(command)


def message(where: str, found: list[str]) -> str:
    return f"{where} was wired by an earlier gate: {'; '.join(found)}"


def broken(missing: Iterable[str]) -> list[str]:
    """The missing events that make a wiring broken (those every gate has wired)."""
    return [event for event in missing if event not in ADDED_LATER]


def file_check(name: str, path: Any, scope: str, data: Any, events: tuple[EventSpec, ...], install: str,
               commands: dict[str, str] | None = None) -> Check | None:
    """The doctor's warning for one hooks file an earlier gate wired (None when `gate install` would change
    nothing in it): `name` the check's, `install` the command that updates it (without its --scope)."""
    found = differences(entries_of(data), events, commands)
    if not found:
        return None
    return Check(name, "warn", message(f"{path} ({scope})", found),
                 f"run `{install} --scope {scope}` to update (it replaces gate's entries and leaves yours as they are)",
                 {"source": str(path), "scope": scope, "differences": found})
