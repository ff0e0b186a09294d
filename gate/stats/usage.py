"""Delivery → use: of the memories delivered in a session, which did the agent then open, cite or act on?

Only the session transcripts can tell. The audit does not record their paths, so a session's transcript is
found where Claude Code keeps it: <claude config dir>/projects/<any>/<session id>.jsonl. The cost is bounded:
the most recent sessions only, and at most the last few MB of each transcript (a use earlier than that is
not seen; such reads are reported as partial).

Per (session, memory) pair, counting only what the agent did after the memory's first delivery there:
- opened: `gate show ID` in a Bash call, or a read of the memory's file;
- cited: the id in the agent's own text;
- acted on: the id in any other tool call (`gate link`, `--supersedes`, `gate forget`, an edit that names it);
- restated: the agent's own text says what the memory says without naming its id — it holds enough of the
  memory's title terms (rules/recall.toml [use]): an agent that applies a fact seldom quotes its id.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate.stats.select import ids

MAX_SESSIONS = 25
MAX_TRANSCRIPT_BYTES = 4 * 1024 * 1024
USES = ("opened", "cited", "acted_on", "restated")

_SAFE_SESSION = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
_SHOW = re.compile(r"\bgate(?:\.cli|\.exe)?\s+(?:-\S+\s+(?:\S+\s+)?)*show\s+([^;&|\n]*)")
_READ_TOOLS = frozenset({"Read", "View"})


def claude_dir() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def find_transcript(session: str, base: Path | None = None) -> Path | None:
    if not _SAFE_SESSION.match(session) or session in {".", ".."}:
        return None  # never a glob pattern or a path made of a session id we did not check
    for candidate in sorted((base or claude_dir()).joinpath("projects").glob(f"*/{session}.jsonl")):
        if candidate.is_file():
            return candidate
    return None


def first_deliveries(records: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """session → memory id → ts of its first delivery in that session (records are oldest first)."""
    sessions: dict[str, dict[str, str]] = {}
    for record in records:
        if record.get("decision") != "fired":
            continue
        session = record.get("session")
        if not isinstance(session, str) or not session:
            continue
        for memory_id in ids(record.get("delivered")):
            sessions.setdefault(session, {}).setdefault(memory_id, str(record.get("ts", "")))
    return sessions


def _id_pattern(memory_ids: list[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(i) for i in sorted(memory_ids, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9-])(?:{alternatives})(?![A-Za-z0-9-])")


def _tail_lines(path: Path, max_bytes: int) -> tuple[list[bytes], bool]:
    """The transcript's lines, or only its last max_bytes (then the first, torn line is dropped)."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        start = max(0, size - max_bytes)
        handle.seek(start)
        data = handle.read()
    lines = data.split(b"\n")
    if start:
        lines = lines[1:]
    return lines, bool(start)


@dataclass
class SessionUse:
    uses: dict[str, set[str]] = field(default_factory=dict)  # memory id → subset of USES
    partial: bool = False


def _mark(found: dict[str, set[str]], delivered: dict[str, str], memory_id: str, ts: str, use: str) -> None:
    first = delivered.get(memory_id)
    # Audit ts has whole seconds, transcripts milliseconds: compare on the seconds both have.
    if first is not None and (not ts or not first or ts[:19] >= first[:19]):
        found.setdefault(memory_id, set()).add(use)


class Restatement:
    """When the agent's text restates a memory: it holds at least min_terms of the memory's title terms, and at
    least min_share of them (rules/recall.toml [use])."""

    def __init__(self, titles: dict[str, str], rules: dict[str, Any] | None = None) -> None:
        from gate.textproc import terms

        rules = rules or {}
        self.min_terms = int(rules.get("restated_min_terms", 3))
        self.min_share = float(rules.get("restated_min_share", 0.5))
        self.terms = {memory_id: frozenset(terms(title)) for memory_id, title in titles.items()}
        self.terms = {m: t for m, t in self.terms.items() if len(t) >= self.min_terms}  # too short to tell

    def restated(self, text: str) -> list[str]:
        from gate.textproc import terms

        said = frozenset(terms(text))
        found = []
        for memory_id, own in self.terms.items():
            shared = len(own & said)
            if shared >= self.min_terms and shared >= self.min_share * len(own):
                found.append(memory_id)
        return found


def session_uses(
    path: Path, delivered: dict[str, str], max_bytes: int = MAX_TRANSCRIPT_BYTES,
    restatement: Restatement | None = None,
) -> SessionUse:
    """What the agent did with each delivered memory, read from the session's transcript. With `restatement`
    (the delivered memories' titles), the agent's text that says what a memory says counts too."""
    pattern = _id_pattern(list(delivered))
    raw_pattern = re.compile(pattern.pattern.encode())
    lines, partial = _tail_lines(path, max_bytes)
    found: dict[str, set[str]] = {}
    for line in lines:
        # Only the agent's own lines naming a delivered id (or, read for restatement, holding text) are worth
        # parsing (the injected context sits in attachment and request lines, which must not count as use).
        if b'"assistant"' not in line or not (
            raw_pattern.search(line) or (restatement is not None and b'"text"' in line)
        ):
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("type") != "assistant":
            continue
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        ts = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else ""
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                for match in pattern.finditer(block["text"]):
                    _mark(found, delivered, match.group(0), ts, "cited")
                for memory_id in restatement.restated(block["text"]) if restatement is not None else ():
                    _mark(found, delivered, memory_id, ts, "restated")
            elif block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                _tool_use(found, delivered, pattern, block, ts)
    return SessionUse(found, partial)


def _tool_use(
    found: dict[str, set[str]], delivered: dict[str, str], pattern: re.Pattern[str], block: dict[str, Any], ts: str
) -> None:
    tool_input = block["input"]
    name = block.get("name")
    opened: set[str] = set()
    command = tool_input.get("command")
    if name == "Bash" and isinstance(command, str):
        for show in _SHOW.finditer(command):
            opened.update(m.group(0) for m in pattern.finditer(show.group(1)))
    if name in _READ_TOOLS and isinstance(tool_input.get("file_path"), str):
        opened.update(m.group(0) for m in pattern.finditer(Path(tool_input["file_path"]).name))
    for memory_id in opened:
        _mark(found, delivered, memory_id, ts, "opened")
    for match in pattern.finditer(json.dumps(tool_input, ensure_ascii=False)):
        if match.group(0) not in opened:
            _mark(found, delivered, match.group(0), ts, "acted_on")


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def _gates_of_first_delivery(records: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """(session, memory id) → the gate that delivered it first there."""
    gates: dict[tuple[str, str], str] = {}
    for record in records:
        if record.get("decision") == "fired":
            for memory_id in ids(record.get("delivered")):
                gates.setdefault((str(record.get("session")), memory_id), str(record.get("gate")))
    return gates


def _figures(pairs: list[tuple[str, set[str]]]) -> dict[str, Any]:
    used = sum(1 for _, kinds in pairs if kinds)
    return {
        "examined": len(pairs),
        **{use: sum(1 for _, kinds in pairs if use in kinds) for use in USES},
        "used": used,
        "used_share": _share(used, len(pairs)),
    }


def memory_titles(memory_ids: set[str], project: Path | None) -> dict[str, str]:
    """The titles of these memories, read from their files in the stores `gate stats` reads (one project's, or
    every project's): what a restating reply is compared with. A memory whose file is gone is left out."""
    from gate.memory.store.files import CorruptMemoryFile, memory_path, read_memory
    from gate.stats.store_size import _stores

    titles: dict[str, str] = {}
    for _, directory in _stores(project):
        for memory_id in sorted(memory_ids - set(titles)):
            path = memory_path(directory, memory_id)
            if path.is_file():
                try:
                    titles[memory_id] = read_memory(path).title
                except (CorruptMemoryFile, OSError):
                    continue
    return titles


def usage_figures(
    records: list[dict[str, Any]], *, max_sessions: int = MAX_SESSIONS, base: Path | None = None,
    restatement: Restatement | None = None,
) -> dict[str, Any]:
    """Overall and per delivering gate: a directive injected at session start is used by obeying it, which
    leaves no id to see, so its figure means less than recall's and is kept apart. `restatement`: the delivered
    memories' titles, for a reply that restates one without its id."""
    sessions = first_deliveries(records)
    gates = _gates_of_first_delivery(records)
    # Most recent sessions first: they are the ones whose transcripts still exist and that a user asks about.
    recent = sorted(sessions, key=lambda s: max(sessions[s].values()), reverse=True)[:max_sessions]
    pairs: list[tuple[str, str, set[str]]] = []  # (gate, memory id, uses)
    found_transcripts = partial = 0
    for session in recent:
        path = find_transcript(session, base)
        if path is None:
            continue
        try:
            result = session_uses(path, sessions[session], restatement=restatement)
        except OSError:
            continue
        found_transcripts += 1
        partial += result.partial
        for memory_id in sessions[session]:
            pairs.append((gates.get((session, memory_id), ""), memory_id, result.uses.get(memory_id, set())))
    used_ids = {memory_id for _, memory_id, kinds in pairs if kinds}
    never_used = [memory_id for memory_id in dict.fromkeys(m for _, m, _ in pairs) if memory_id not in used_ids]
    return {
        "sessions_with_deliveries": len(sessions),
        "sessions_examined": len(recent),
        "transcripts_found": found_transcripts,
        "partial_reads": partial,
        "delivered": sum(len(v) for v in sessions.values()),
        **_figures([(m, kinds) for _, m, kinds in pairs]),
        "by_gate": {
            gate: _figures([(m, kinds) for g, m, kinds in pairs if g == gate])
            for gate in dict.fromkeys(g for g, _, _ in pairs)
        },
        # Delivered again and again and never touched: candidates for a better title, or for `gate forget`.
        "never_used_ids": never_used[:20],
    }
