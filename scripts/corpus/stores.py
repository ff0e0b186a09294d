"""Delivery stores for `gate replay --labels`, and the relevance sheets annotators label with them.

    python scripts/corpus/stores.py export --root MIRROR --owner OWNER --memories WRITTEN.json [--cues CUES.json]
        --out STORE.jsonl
    python scripts/corpus/stores.py sheet  --root MIRROR --owner OWNER --store STORE.jsonl --out SHEET.txt

`export` turns the memories a writer produced by rubrics/memory-writing.md (a JSON list) into `gate export`
JSON lines: `supersedes` becomes links, and `created` is the timestamp of the turn the memory came from (read
from the transcript at `source_turn`), so a replayed session holds exactly the memories written before it began.
`sheet` writes, per session of the owner, the memories that existed when it started and its prompts in order
(rubric: relevance.md). Sheets hold other people's text: keep them outside the repository.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gate.replay.sandbox import first_timestamp, session_start
from gate.replay.timeline import read_timeline
from gate.session.transcript import read_turn

FIELDS = ("id", "kind", "title", "body", "tags", "paths")


def _transcripts(root: Path, owner: str) -> dict[str, Path]:
    """session id -> transcript, for every transcript of the owner."""
    out = {}
    for path in sorted((root / owner).rglob("*.jsonl")):
        timeline = read_timeline(str(path))
        out[timeline.session_id] = path
        out.setdefault(path.stem, path)
    return out


def _line_timestamp(path: Path, line: int) -> str:
    return first_timestamp(str(path), line)


def _seconds(stamp: str) -> str:
    return stamp[:19] + "Z" if len(stamp) >= 19 else stamp


def export(
    root: Path, owner: str, written: list[dict[str, Any]], cues: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    sessions = _transcripts(root, owner)
    out = []
    for item in written:
        session = str(item.get("source_session", ""))
        path = sessions.get(session) or next((p for s, p in sessions.items() if s.startswith(session)), None)
        if path is None:
            raise SystemExit(f"stores: {item.get('id')}: no transcript of session {session!r} under {owner}")
        stamp = _line_timestamp(path, int(item.get("source_turn") or 1)) or str(item.get("session_start") or "")
        memory: dict[str, Any] = {key: item[key] for key in FIELDS if key in item}
        memory["links"] = [{"type": "supersedes", "target": t} for t in item.get("supersedes") or []]
        memory["created"] = memory["updated"] = _seconds(stamp) if stamp else "2000-01-01T00:00:00Z"
        memory["session"] = session
        if cues and cues.get(memory["id"]):
            memory["cues"] = cues[memory["id"]]  # written as `gate remember --cues` asks, at the memory's turn
        out.append(memory)
    return out


def sheet(root: Path, owner: str, store: list[dict[str, Any]]) -> str:
    """The memory catalogue once, oldest first (numbered), then per session the prompts; a session may use the
    catalogue's first N memories (the ones created before it began)."""
    sessions = sorted((session_start(str(p)), str(p)) for p in set(_transcripts(root, owner).values()))
    catalogue = sorted(store, key=lambda m: (m["created"], m["id"]))
    superseded = {link["target"]: m["id"] for m in catalogue for link in m.get("links", [])
                  if link["type"] == "supersedes"}
    lines = ["######## MEMORY CATALOGUE (oldest first; a session may use only the first N, given in its header)"]
    for number, memory in enumerate(catalogue, start=1):
        later = f" [SUPERSEDED by {superseded[memory['id']]}]" if memory["id"] in superseded else ""
        body = " ".join(str(memory.get("body", "")).split())[:220]
        lines.append(f"{number:>3}. {memory['id']} · {memory['kind']}{later} · {memory['title']}\n      {body}")
    for started, path in sessions:
        rel = str(Path(path).relative_to(root))
        known = sum(1 for m in catalogue if not started or m["created"] < _seconds(started))
        prompts = read_timeline(path).prompts()
        if not prompts or not known:
            continue
        lines.append(f"\n######## SESSION {rel}  (started {started or 'unknown'}; may use memories 1–{known} of the "
                     f"catalogue; a memory superseded by one within 1–{known} is replaced)")
        for n, step in enumerate(prompts):
            if n:
                reply = read_turn(path, None, end=step.end).text
                flat = " ".join(reply.split())
                lines.append(f"    (assistant replied) {flat[:400]}{' …' if len(flat) > 400 else ''}")
            text = " ".join(str(step.event.get("prompt", "")).split())
            lines.append(f"\n--- R {rel}#{step.line}  (prompt {n} of the session)")
            lines.append(text[:1500] + (" …" if len(text) > 1500 else ""))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("export", "sheet"):
        command = sub.add_parser(name)
        command.add_argument("--root", required=True, type=Path)
        command.add_argument("--owner", required=True)
        command.add_argument("--out", required=True, type=Path)
    sub.choices["export"].add_argument("--memories", required=True, type=Path)
    sub.choices["export"].add_argument("--cues", type=Path, help="JSON {memory id: cue words} to add")
    sub.choices["sheet"].add_argument("--store", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.command == "export":
        cues = json.loads(args.cues.read_text(encoding="utf-8")) if args.cues else None
        memories = export(args.root, args.owner, json.loads(args.memories.read_text(encoding="utf-8")), cues)
        args.out.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in memories), encoding="utf-8")
        print(f"{args.owner}: {len(memories)} memories -> {args.out}")
    else:
        store = [json.loads(line) for line in args.store.read_text(encoding="utf-8").splitlines() if line.strip()]
        args.out.write_text(sheet(args.root, args.owner, store), encoding="utf-8")
        print(f"{args.owner}: relevance sheet -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
