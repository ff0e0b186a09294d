"""Merge two annotators' labels: their agreement, and the labels `gate replay --labels` reads.

    python scripts/corpus/agree.py --a DIR_A --b DIR_B --owners A,B,… --rubric writeback|shift|relevance --out FILE
    python scripts/corpus/agree.py --a DIR --owners … --rubric … --out FILE          (one annotator)

--a and --b take several folders, comma-separated, when one annotator's side of the labels was done by several
people (each labelled part of an owner's cases): every file of a stem found in any of them is read.

Annotators write OWNER.<rubric>.jsonl (scripts/corpus/cases.py's sheets; rubrics in ../shared/corpora/rubrics).
With two annotators only the cases they agree on are written (relevance: the memories both listed, on prompts
where both lists are identical or at least one memory is shared — see `_agreed_memories`); agreement and Cohen's
kappa are printed. The output holds ids, verdicts and kinds only: no text of the sessions, no annotator notes.
A turn that compaction split in two parts on the sheets (same transcript and line, two `n`) counts as one
turn that should block when either part should.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _read(directories: list[Path], owner: str, rubric: str) -> list[dict[str, Any]]:
    paths = [d / f"{owner}.{rubric}.jsonl" for d in directories if (d / f"{owner}.{rubric}.jsonl").is_file()]
    if not paths:
        raise SystemExit(f"agree: no {owner}.{rubric}.jsonl in {', '.join(map(str, directories))}")
    return [json.loads(line) for path in paths for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _folders(value: str) -> list[Path]:
    return [Path(part) for part in value.split(",") if part]


def _writeback(items: list[dict[str, Any]]) -> dict[tuple[str, int], tuple[bool, str]]:
    parts: dict[tuple[str, int], list[tuple[bool, str]]] = {}
    for item in items:
        block = bool(item["should_block"])
        kind = str(item.get("category") or "none") if block else "none"
        parts.setdefault((item["transcript"], int(item["turn"])), []).append((block, kind))
    out = {}
    for key, verdicts in parts.items():
        blocking = [kind for block, kind in verdicts if block]
        out[key] = (True, blocking[0]) if blocking else (False, "none")
    return out


def _shift(items: list[dict[str, Any]]) -> dict[tuple[str, int], bool]:
    return {(item["transcript"], int(item["prompt"])): bool(item["shift"]) for item in items}


def _relevance(items: list[dict[str, Any]]) -> dict[tuple[str, int], list[str]]:
    return {(item["transcript"], int(item["prompt"])): list(item.get("relevant") or []) for item in items}


def kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    n = len(pairs)
    if not n:
        return None
    observed = sum(1 for a, b in pairs if a == b) / n
    a_true = sum(1 for a, _ in pairs if a) / n
    b_true = sum(1 for _, b in pairs if b) / n
    expected = a_true * b_true + (1 - a_true) * (1 - b_true)
    return 1.0 if expected == 1 else round((observed - expected) / (1 - expected), 3)


def _agreed_memories(a: list[str], b: list[str]) -> list[str] | None:
    """Both annotators' memories for one prompt: the ones both chose; None (not scored) when each chose
    something and they share nothing."""
    shared = [m for m in a if m in b]
    if a and b and not shared:
        return None
    return shared


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", required=True, type=_folders, help="the first annotator's folder(s)")
    parser.add_argument("--b", type=_folders, help="the second annotator's folder(s)")
    parser.add_argument("--owners", required=True)
    parser.add_argument("--rubric", required=True, choices=("writeback", "shift", "relevance"))
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--files", default="", help="comma-separated file stems instead of owner names")
    args = parser.parse_args(argv)
    owners = [o for o in (args.files or args.owners).split(",") if o]
    reader = {"writeback": _writeback, "shift": _shift, "relevance": _relevance}[args.rubric]
    first: dict[Any, Any] = {}
    second: dict[Any, Any] = {}
    for owner in owners:
        first.update(reader(_read(args.a, owner, args.rubric)))
        if args.b:
            second.update(reader(_read(args.b, owner, args.rubric)))
    lines = []
    if args.b is None:
        agreed = first
    else:
        missing = set(first) ^ set(second)
        if missing:
            print(f"agree: {len(missing)} cases labelled by one annotator only, e.g. {sorted(missing)[:3]}",
                  file=sys.stderr)
        common = sorted(set(first) & set(second))
        if args.rubric == "relevance":
            agreed = {}
            same = 0
            for key in common:
                memories = _agreed_memories(first[key], second[key])
                if sorted(first[key]) == sorted(second[key]):
                    same += 1
                if memories is not None:
                    agreed[key] = memories
            union = sum(len(set(first[k]) | set(second[k])) for k in common)
            both = sum(len(set(first[k]) & set(second[k])) for k in common)
            print(f"relevance: {len(common)} prompts, identical lists on {same}; memories chosen by both "
                  f"{both} of {union} chosen by either; scored prompts {len(agreed)}")
        else:
            def verdict(value: Any) -> bool:
                return value[0] if isinstance(value, tuple) else bool(value)

            pairs = [(verdict(first[k]), verdict(second[k])) for k in common]
            agreed = {k: first[k] for k in common if verdict(first[k]) == verdict(second[k])}
            print(f"{args.rubric}: agreement {len(agreed)} of {len(common)}, kappa {kappa(pairs)}; "
                  f"true in agreed: {sum(1 for k in agreed if verdict(agreed[k]))}")
    for (transcript, line), value in sorted(agreed.items()):
        if args.rubric == "writeback":
            block, kind = value
            item: dict[str, Any] = {"transcript": transcript, "turn": line, "block": block}
            if block and kind != "none":
                item["kind"] = kind
        elif args.rubric == "shift":
            item = {"transcript": transcript, "prompt": line, "shift": value}
        else:
            item = {"transcript": transcript, "prompt": line, "memories": value}
        lines.append(json.dumps(item, ensure_ascii=False))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} labels to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
