#!/usr/bin/env python3
"""Copy an annotator's verdicts into the repository, without their notes.

    python scripts/corpus/keep_verdicts.py FOLDER NAME [--rubric writeback|shift|relevance]

FOLDER is where the annotator wrote OWNER.<rubric>.jsonl (outside the repository: their "why" notes are in their
words but about other people's sessions); NAME the annotator's name. Each line is kept with its ids and verdict
fields only (eval/README.md: verdicts, without notes) in eval/annotations/NAME/, in the order written. A line
that is no JSON object, or that lacks its ids, stops the copy with the file and line named: nothing is written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KEPT = {
    "writeback": ("transcript", "turn", "n", "should_block", "category", "confidence"),
    "shift": ("transcript", "prompt", "n", "shift", "confidence"),
    "relevance": ("transcript", "prompt", "relevant"),
}
IDS = {"writeback": ("transcript", "turn"), "shift": ("transcript", "prompt"), "relevance": ("transcript", "prompt")}


def verdicts(path: Path, rubric: str) -> list[str]:
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as error:
            raise SystemExit(f"keep_verdicts: {path}:{number}: not JSON ({error})") from None
        if not isinstance(item, dict) or any(key not in item for key in IDS[rubric]):
            raise SystemExit(f"keep_verdicts: {path}:{number}: no {' and '.join(IDS[rubric])}")
        out.append(json.dumps({key: item[key] for key in KEPT[rubric] if key in item}, ensure_ascii=False))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("name")
    parser.add_argument("--rubric", choices=sorted(KEPT), action="append")
    args = parser.parse_args(argv)
    rubrics = args.rubric or sorted(KEPT)
    files = {path: rubric for rubric in rubrics for path in sorted(args.folder.glob(f"*.{rubric}.jsonl"))}
    if not files:
        print(f"keep_verdicts: no *.{{{','.join(rubrics)}}}.jsonl in {args.folder}", file=sys.stderr)
        return 2
    kept = {path: verdicts(path, rubric) for path, rubric in files.items()}  # all read before anything is written
    target = REPO / "eval" / "annotations" / args.name
    target.mkdir(parents=True, exist_ok=True)
    for path, lines in kept.items():
        (target / path.name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        print(f"{target.relative_to(REPO) / path.name}: {len(lines)} verdicts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
