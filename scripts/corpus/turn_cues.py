"""Delivery stores with the cues `gate remember` would add from each memory's turn, to measure them (issue 29).

    python scripts/corpus/turn_cues.py --root MIRROR --labels eval/labels/dev/delivery.jsonl --out DIR
    gate replay --labels DIR/none/delivery.jsonl --root MIRROR     # the memories without any cues
    gate replay --labels DIR/turn/delivery.jsonl --root MIRROR     # without the writer's cues, with gate's

A delivery store's memory knows the session it was written in and `created`, the timestamp of the prompt that
opened its turn (rubrics/memory-writing.md). That turn, read whole (up to the next prompt, as an agent storing at
its end sees it), goes through gate/session/turn_cues.py's derive(), with the project's prompt-terms table as it
stood then (every prompt of the owner's sessions before `created`). A transcript whose lines all carry one
timestamp (a converted export) cannot tell which turn a memory came from: its memories get no cues, in both
variants, and are counted. The stores and label files written hold other people's text: keep DIR outside the
repository.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gate.replay.sandbox import _normalise, read_store_file
from gate.replay.timeline import read_timeline
from gate.rules import load_rules
from gate.session.transcript import read_turn
from gate.session.turn_cues import common_in_project, derive
from gate.textproc import terms


def _session_paths(root: Path, owner: str) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted((root / owner).rglob("*.jsonl")):
        out.setdefault(read_timeline(str(path)).session_id, path)
        out.setdefault(path.stem, path)
    return out


def _prompts(path: Path) -> list[tuple[str, Any]]:
    """(timestamp of the prompt's line, its step) for every prompt of a transcript."""
    stamps: dict[int, str] = {}
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("timestamp"), str):
                stamps[number] = _normalise(entry["timestamp"])
    return [(stamps.get(step.line, ""), step) for step in read_timeline(str(path)).prompts()]


class _Table:
    """The prompt-terms table as it stood at a time: the owner's prompts before it."""

    def __init__(self, prompts: list[tuple[str, set[str]]], before: str) -> None:
        counted = [found for stamp, found in prompts if stamp and stamp < before]
        self.prompts = len(counted)
        self.terms: dict[str, int] = {}
        for found in counted:
            for term in found:
                self.terms[term] = self.terms.get(term, 0) + 1

    def share(self, term: str) -> float:
        return self.terms.get(term, 0) / self.prompts if self.prompts else 0.0


def turn_cues(
    root: Path, owner: str, store: list[dict[str, Any]], overrides: dict[str, Any] | None = None
) -> tuple[dict[str, str], int]:
    """memory id -> the cues its turn gives; and how many memories had no turn to read."""
    rules = {**load_rules("remember").get("turn_cues", {}), **(overrides or {})}
    text_rules = load_rules("text")
    sessions = _session_paths(root, owner)
    timelines = {path: _prompts(path) for path in set(sessions.values())}
    every = [(stamp, set(terms(str(step.event.get("prompt", ""))))) for found in timelines.values()
             for stamp, step in found]
    out: dict[str, str] = {}
    unplaced = 0
    for memory in store:
        path = sessions.get(memory.get("session", ""))
        prompts = timelines.get(path, []) if path else []
        stamps = [stamp for stamp, _ in prompts]
        created = memory.get("created", "")
        opened = [i for i, stamp in enumerate(stamps) if stamp and stamp <= created]
        if not path or len(set(stamps)) < 2 or not opened:  # one timestamp for every line: no turn to tell
            unplaced += 1
            continue
        index = opened[-1]  # the prompt that opened the memory's turn (its queue line may be a second before)
        end = prompts[index + 1][1].end if index + 1 < len(prompts) else None
        turn = read_turn(str(path), end=end)
        common = common_in_project(_Table(every, created), rules)  # type: ignore[arg-type]
        cues = derive(turn, rules, common, text_rules).text
        if cues:
            out[memory["id"]] = cues
    return out, unplaced


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--labels", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                        help="a rules/remember.toml [turn_cues] value to try instead (TOML value: 5, \"pairs\")")
    args = parser.parse_args(argv)
    import tomllib

    overrides = tomllib.loads("\n".join(args.rule))
    items = [json.loads(line) for line in args.labels.read_text(encoding="utf-8").splitlines() if line.strip()]
    variants: dict[str, list[dict[str, Any]]] = {"none": [], "turn": []}
    for variant in variants:
        (args.out / variant / "stores").mkdir(parents=True, exist_ok=True)
    for item in items:
        if "store" not in item:
            for lines in variants.values():
                lines.append(item)
            continue
        source = (args.labels.parent / item["store"]).resolve()
        owner = source.stem
        store = read_store_file(str(source))
        derived, unplaced = turn_cues(args.root, owner, store, overrides)
        print(f"{owner}: {len(store)} memories, {len(derived)} with cues from their turn, {unplaced} without a "
              "turn to read")
        for variant, lines in variants.items():
            memories = []
            for memory in store:
                memory = {k: v for k, v in memory.items() if k not in ("cues", "derived_cues")}
                if variant == "turn" and memory["id"] in derived:
                    memory["derived_cues"] = derived[memory["id"]]
                memories.append(memory)
            target = args.out / variant / "stores" / source.name
            target.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in memories), encoding="utf-8")
            lines.append({**item, "store": f"stores/{source.name}"})
    for variant, lines in variants.items():
        file = args.out / variant / "delivery.jsonl"
        file.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
        print(f"{variant}: {file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
