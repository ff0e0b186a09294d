#!/usr/bin/env python3
"""Build a directory that mirrors the corpus's sessions/ as transcripts the hooks can replay.

    python scripts/corpus/mirror.py --out DIR [--corpus ../shared/corpora] [--json]

Every raw .jsonl is symlinked at its relative path; every gzip-compressed `.jsonl.gz` (a Claude Code transcript
or a Codex CLI rollout, which the hooks read as it is: gate/hosts/codex/rollout.py) is written decompressed at
its relative path less `.gz`; every export is converted to `<its relative path>.jsonl`.
Prints, per owner: files, prompts, commands, answered turns, assistant lines, tool calls and results, and the
lines or parts skipped, by cause. Running it again rewrites nothing that is already up to date. DIR must lie
outside the repository and the corpus: converted sessions are other people's text.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from convert import ExportError, convert_file, write_atomically
from exports.classify import Counts, count_file, count_lines, read_session

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora"
NOT_SESSIONS = ("manifest.json", "README.md")


def _link(target: Path, link: Path) -> None:
    """Point `link` at `target`, leaving a correct link untouched."""
    if link.is_symlink() and Path(os.readlink(link)) == target:
        return
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(target)


def mirror_owner(owner: Path, sessions: Path, out: Path) -> tuple[Counts, dict[str, int]]:
    """Mirror one owner's folder; (counts, how many files of each format)."""
    total = Counts()
    formats: dict[str, int] = {}
    for path in sorted(p for p in owner.rglob("*") if p.is_file()):
        relative = path.relative_to(sessions)
        if path.suffix == ".jsonl":
            _link(path.resolve(), out / relative)
            counts = count_file(path)
            formats["raw-jsonl"] = formats.get("raw-jsonl", 0) + 1
        elif path.name.endswith(".jsonl.gz"):
            try:
                data = read_session(path)
            except (OSError, EOFError) as error:  # a corrupt or cut gzip stream: counted, never silent
                total.skipped[f"file not read: {error}"] += 1
                continue
            write_atomically(out / str(relative)[: -len(".gz")], data)
            counts = count_lines(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"))
            name = "codex-rollout" if _is_rollout(data) else "raw-jsonl"
            formats[f"{name} (gzip)"] = formats.get(f"{name} (gzip)", 0) + 1
        else:
            try:
                name, data, counts = convert_file(path)
            except ExportError as error:
                total.skipped[f"file not converted: {error.reason.split(' (')[0]}"] += 1
                continue
            write_atomically(out / f"{relative}.jsonl", data)
            formats[name] = formats.get(name, 0) + 1
        total.add(counts)
    return total, formats


def _is_rollout(data: bytes) -> bool:
    """A Codex CLI rollout opens with its session_meta line."""
    try:
        first = json.loads(data.split(b"\n", 1)[0])
    except ValueError:
        return False
    return isinstance(first, dict) and first.get("type") == "session_meta"


def _inside(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def _table(rows: list[tuple[str, Counts, dict[str, int]]]) -> str:
    header = ("owner", "files", "prompts", "cmds", "turns", "asst", "calls", "results", "compact")
    lines = ["  ".join(f"{h:>7}" if i else f"{h:<45}" for i, h in enumerate(header))]
    for owner, c, _ in rows:
        cells = (c.files, c.prompts, c.commands, c.turns, c.assistant_lines, c.tool_calls, c.tool_results)
        lines.append(f"{owner:<45}  " + "  ".join(f"{v:>7}" for v in (*cells, c.compactions)))
    lines.append("")
    for owner, c, formats in rows:
        lines.append(f"{owner} ({', '.join(f'{k} {v}' for k, v in sorted(formats.items()))})")
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(c.user_kinds.items()))
        lines.append(f"    user lines opening no turn: {kinds or 'none'}")
        for cause, count in sorted(c.skipped.items()):
            lines.append(f"    skipped: {cause}: {count}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the mirror directory (outside the repository)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the corpora folder (holds sessions/)")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args(argv)
    sessions = (args.corpus / "sessions").resolve()
    out = args.out.resolve()
    if not sessions.is_dir():
        print(f"mirror: {sessions}: no such directory (give the corpora folder with --corpus)", file=sys.stderr)
        return 2
    for forbidden, what in ((REPO, "the repository"), (sessions, "the corpus")):
        if _inside(out, forbidden) or _inside(forbidden, out):
            print(f"mirror: --out {out} overlaps {what}; choose a directory outside it", file=sys.stderr)
            return 2
    rows = []
    for owner in sorted((p for p in sessions.iterdir() if p.is_dir()), key=lambda p: p.name.lower()):
        counts, formats = mirror_owner(owner, sessions, out)
        rows.append((owner.name, counts, formats))
    if args.json:
        report = {owner: {**c.as_dict(), "formats": formats} for owner, c, formats in rows}
        print(json.dumps(report, indent=1, sort_keys=True))
    else:
        print(_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
