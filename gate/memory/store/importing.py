"""Importing JSON lines into a store (cold path): `gate import`, as `gate export` writes them.

The whole input is validated before anything is written (ids unique, links resolvable, no supersession cycle, no
secrets); a line without an id that a memory already says is not written twice; an interrupted import says how far
it got, and a run again goes on from there. Writes go through the store (gate/memory/store/store.py), whose Store is the
first argument of everything here.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from gate.errors import GateError, ValidationError
from gate.memory.model import ID_PATTERN, SCOPES, Memory, mint_id
from gate.memory.store.anchor_paths import fields_to_project
from gate.memory.store.files import CorruptMemoryFile, as_written, read_memory, sweep_temps, write_memories
from gate.memory.store.secrets import refuse_secrets, text_fields
from gate.memory.supersession import closing_chain, cycle_refusal, live_supersedes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from gate.memory.store.store import Store

IMPORT_BATCH = 1000  # files written per sync: an interrupted import loses at most one batch's temp files


class ImportReport:
    """What an import did: the ids written (and of those, the ids it wrote over), the ids already in the store
    as the input has them (nothing written), the lines without an id that a memory already says, and each
    refused line."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.replaced: list[str] = []
        self.unchanged: list[str] = []
        self.already: list[tuple[int, str]] = []  # (line number, the id of the memory it restates): a line
        # without an id whose kind, title and body a memory of the store (or an earlier line) has
        self.refused: list[tuple[int, str]] = []  # (line number, why)

    def to_json(self) -> dict[str, Any]:
        return {"imported": len(self.ids), "ids": self.ids, "replaced": self.replaced, "unchanged": self.unchanged,
                "already": [{"line": line, "id": memory_id} for line, memory_id in self.already],
                "skipped": [{"line": line, "error": error} for line, error in self.refused]}


class ImportInterrupted(GateError):
    """An import stopped (SIGINT) while it wrote: how many memories it wrote, each whole."""

    exit_code = 130

    def __init__(self, written: int, total: int, report: ImportReport | None = None, *,
                 matched: str = "a line with an id is matched by its id, one without by its kind, title and body"
                 ) -> None:
        super().__init__(
            f"interrupted: {written} of {total} memories were written before the import stopped (each file whole; "
            "the rest not at all)",
            hint=f"run the same import again: it writes only what is not in the store yet ({matched})",
        )
        self.written = written
        self.report = report or ImportReport()


class _Fingerprints:
    """The live memories of a store by what they say (scope, kind, title, body; spacing aside, and the title's
    case), so a line without an id that a memory already says is not written twice."""

    def __init__(self, store: Store) -> None:
        self._ids: dict[tuple[str, str, str, str], str] = {}
        for memory in store.memories():
            if memory.status != "forgotten":
                self.add(memory)

    @staticmethod
    def _key(memory: Memory) -> tuple[str, str, str, str]:
        return (memory.scope, memory.kind, " ".join(memory.title.split()).casefold(), " ".join(memory.body.split()))

    def match(self, memory: Memory) -> str | None:
        return self._ids.get(self._key(memory))

    def add(self, memory: Memory) -> None:
        self._ids.setdefault(self._key(memory), memory.id)


def _mint_free(taken: set[str]) -> str:
    """A fresh id that is not in `taken` (which it joins): ids are random, so at 20,000 lines some draw the same."""
    for _ in range(1000):
        candidate = mint_id()
        if candidate not in taken:
            taken.add(candidate)
            return candidate
    raise RuntimeError("could not mint a free id")


def import_lines(store: Store, lines: Iterable[str], *, source_name: str = "input") -> list[str]:
    """Import JSON lines, all or nothing: every refused line is named, and then nothing is written."""
    return import_report(store, lines, source_name=source_name).ids


def import_report(
    store: Store, lines: Iterable[str], *, source_name: str = "input", skip_refused: bool = False,
    replace: bool = False, keep_project: bool = False,
) -> ImportReport:
    """Import JSON lines as `gate export` writes them.

    What is imported becomes the importing project's: each private and user memory's `project` is this
    project's id (the export of another checkout, machine or repository names that one, and its memories would
    never be delivered here). `keep_project` keeps the `project` a line names (a line without one is this
    project's either way).

    The whole input is validated first (ids unique, links resolvable within the input or the store, no
    supersession cycle, no secrets). Every refused line is reported with its number. Without `skip_refused`
    a refused line means nothing is written; with it, the rest is written (and a line whose link pointed at
    a refused one is refused in turn). `replace`: a line whose id exists writes over that memory, whose
    version is kept in the history; without it, such a line is refused. A line that is the memory as the
    store already holds it (an unchanged export imported again) is neither: it is counted as unchanged and
    nothing is written. So is a line without an id whose kind, title and body a live memory of its scope
    has (or an earlier line): an import run again after an interruption writes only what is not there.
    Ids minted for lines without one are free in the store and in the input.

    Interrupted (SIGINT) while writing, it raises ImportInterrupted naming how many memories it wrote: each
    file is whole or absent, and a run again goes on from there."""
    report = ImportReport()
    accepted: dict[str, tuple[int, Memory]] = {}
    unchanged: set[str] = set()
    existing = store.existing_ids()  # one listing, not three stats per line (imports run to 100k lines)
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValidationError("a line must be a JSON object")
        except (ValueError, ValidationError) as error:
            report.refused.append((number, _refusal(error)))
            continue
        rows.append((number, data))
    # a minted id is taken by no memory and by no line of the input, whichever comes first
    taken = existing | {str(data["id"]) for _, data in rows if data.get("id")}
    known = _Fingerprints(store) if any(not data.get("id") for _, data in rows) else None
    for number, data in rows:
        try:
            memory, same = _import_line(store, data, accepted, existing, replace=replace, keep_project=keep_project)
            if not data.get("id"):
                assert known is not None
                already = known.match(memory)
                if already is not None:
                    report.already.append((number, already))
                    continue
                memory.id = _mint_free(taken)
        except (ValueError, ValidationError) as error:
            report.refused.append((number, _refusal(error)))
            continue
        accepted[memory.id] = (number, memory)
        if known is not None:
            known.add(memory)  # a later line without an id that says the same is not written twice
        if same:
            unchanged.add(memory.id)
    _refuse_dangling_links(accepted, existing, report)
    if _refuse_cycles(store, accepted, existing, report):
        _refuse_dangling_links(accepted, existing, report)  # a line linking to a refused one, in turn
    report.refused.sort()
    if report.refused and not skip_refused:
        named = "; ".join(f"line {n}: {why}" for n, why in report.refused)
        raise ValidationError(
            f"{source_name}: {len(report.refused)} line(s) refused — {named}",
            hint="nothing was imported; fix those lines, or --skip-refused imports the rest",
        )
    report.unchanged = [m.id for _, m in accepted.values() if m.id in unchanged]
    parsed = [memory for _, memory in accepted.values() if memory.id not in unchanged]
    replaced = [m for m in parsed if m.id in existing]
    fresh = [m for m in parsed if m.id not in existing]
    written: list[Path] = []
    try:
        _write_imported(store, fresh, replaced, written)
    except KeyboardInterrupt:
        # what was written is indexed now, not by the first hook after (4 s inline for 9,574 files); a second
        # Ctrl-C leaves that to the next command or hook
        with contextlib.suppress(KeyboardInterrupt):
            store.catch_up()
            store.build_cues()
        # a new memory is counted on disk (the signal may come between a file's rename and its count)
        done = sum(1 for m in fresh if store.locate(m.id) is not None) + \
            len({path.stem for path in written} & {m.id for m in replaced})
        raise ImportInterrupted(done, len(parsed), report) from None
    store.catch_up()
    if parsed:
        store.build_cues()
    report.ids = [m.id for m in parsed]
    report.replaced = [m.id for m in replaced]
    return report

def _write_imported(store: Store, fresh: list[Memory], replaced: list[Memory], written: list[Path]) -> None:
    """Write an import's memories in batches (one sync a batch); `written` grows by each file placed, so an
    interruption can say how far it got."""
    for scope in SCOPES:
        sweep_temps(store.paths.store_for_scope(scope))  # what a writer killed mid-write left
    if any(m.scope == "private" for m in (*fresh, *replaced)):
        store._mark_project()
    for memory in replaced:
        store._keep_previous(memory.id, memory.scope, "import", prune=False)
    for scope in {m.scope for m in replaced}:
        store.history(scope).prune()  # once, not once a line (imports run to 100k lines)
    for batch, new in [*((fresh[i:i + IMPORT_BATCH], True) for i in range(0, len(fresh), IMPORT_BATCH)),
                       *((replaced[i:i + IMPORT_BATCH], False) for i in range(0, len(replaced), IMPORT_BATCH))]:
        store._written.update(m.scope for m in batch)
        write_memories([(store.paths.store_for_scope(m.scope), as_written(m), m.scope != "team") for m in batch],
                       new=new, placed=written)

def _import_line(
    store: Store, data: dict[str, Any], accepted: dict[str, tuple[int, Memory]], existing: set[str], *, replace: bool,
    keep_project: bool = False,
) -> tuple[Memory, bool]:
    """The memory of one line, and whether the store holds it as it is already."""
    if not data.get("id"):
        data = {k: v for k, v in data.items() if k != "id"}  # minted by the caller, free in store and input
    if not keep_project or not data.get("project"):
        # bound to this project; a memory the store holds under a name of this project keeps that name (the
        # same export imported again is unchanged, not a difference)
        data["project"] = store.paths.key
    fields_to_project(data, store.paths.root)  # an absolute path inside the project: made relative
    if data.get("id") is not None and not ID_PATTERN.match(str(data["id"])):
        raise ValidationError(f"invalid id {data['id']!r}")
    memory = Memory.from_dict(data)
    if "id" in data and memory.id in accepted:
        raise ValidationError(f"id {memory.id!r} is not unique (line {accepted[memory.id][0]} has it too)")
    same = False
    if "id" in data and memory.id in existing:
        path = store.locate(memory.id)
        where = store._scope_of(path) if path is not None else memory.scope
        if where != memory.scope:
            raise ValidationError(f"id {memory.id!r} exists in the {where} store, not the {memory.scope} one")
        same = path is not None and _holds(path, memory, data, store.paths.owns)
        if not same and not replace:
            raise ValidationError(
                f"id {memory.id!r} exists in the store, and differs from this line (--replace writes over it)"
            )
    refuse_secrets(text_fields(memory), store.paths.root)
    return memory, same

def _refuse_cycles(
    store: Store, accepted: dict[str, tuple[int, Memory]], existing: set[str], report: ImportReport
) -> bool:
    """Refuse each line whose `supersedes` links close a cycle with the lines before it and the store (the
    line that closes it: the others are kept). Whether any was refused."""
    graph: dict[str, list[str]] = {}

    def supersedes_of(memory_id: str) -> list[str]:
        return graph[memory_id] if memory_id in graph else store._supersedes_now(memory_id)

    refused = False
    for memory_id, (number, memory) in sorted(accepted.items(), key=lambda item: item[1][0]):
        targets = live_supersedes(memory.status, memory.links)
        added = [t for t in targets if t not in store._supersedes_now(memory_id)] if memory_id in existing \
            else targets
        chain = closing_chain(memory_id, added, supersedes_of) if added else None
        if chain is not None:
            message, _ = cycle_refusal(chain)
            report.refused.append((number, message.replace("; nothing was written", "")))
            del accepted[memory_id]
            refused = True
            continue
        graph[memory_id] = targets
    return refused

def _holds(path: Path, memory: Memory, given: dict[str, Any], owns: Callable[[str], bool]) -> bool:
    """Whether the file at `path` is `memory` as it would be written (an unreadable file is not). A field
    the line leaves out (no `created`, say, which the import fills with the time of this run) is not a
    difference: the same line imported twice is the same memory. Two names of this project (its id, a path
    it had before) are the same project."""
    try:
        current = read_memory(path)
    except (CorruptMemoryFile, OSError):
        return False
    current.scope = memory.scope
    stored, line = as_written(current).to_dict(), as_written(memory).to_dict()
    if owns(stored["project"]) and owns(line["project"]):
        line["project"] = stored["project"]
    return all(stored[key] == line[key] for key in line if key in given)


def _refuse_dangling_links(accepted: dict[str, tuple[int, Memory]], existing: set[str], report: ImportReport) -> None:
    """Refuse the lines whose links point at neither an accepted line nor the store, until none is left."""
    changed = True
    while changed:
        changed = False
        for memory_id, (number, memory) in list(accepted.items()):
            missing = [link for link in memory.links if link.target not in accepted and link.target not in existing]
            if missing:
                link = missing[0]
                report.refused.append(
                    (number, f"{memory_id} links to {link.target}, which is neither in the input nor in the store")
                )
                del accepted[memory_id]
                changed = True


def _refusal(error: Exception) -> str:
    """Why an import line was refused, in words: Python's own for a line that is not JSON ("Expecting value:
    line 1 column 1 (char 0)") name a line and a char the user cannot see."""
    if isinstance(error, json.JSONDecodeError):
        return f"not JSON ({error.msg} at column {error.colno}); each line must be one JSON object, as `gate export` " \
            "writes"
    return str(error)
