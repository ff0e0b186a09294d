"""A store-size check for the recall gate on a labelled split: every delivery store padded with the memories of
the split's other stores, which no prompt of it should receive.

    python scripts/corpus/padded_stores.py --labels eval/labels/dev/delivery.jsonl --out DIR
    gate replay --labels DIR/delivery.jsonl --root MIRROR

The padding memories are dated before every session (so each session's store holds all of them, besides its
own project's earlier memories) and lose their links; their ids stay unique. Any of them injected is irrelevant
by construction: the figures show how the gate's floor holds up when a store holds many memories about other
things — the case of a big store, which the dev split's (73 and 41 memories) are not. DIR gets the padded
stores and a copy of the labels whose store lines name them; nothing of the sessions' text is written.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

PADDING_DATE = "2000-01-01T00:00:00Z"


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def padded(own: list[dict[str, Any]], others: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The store's own memories, then every other store's, dated before any session and unlinked."""
    seen = {memory["id"] for memory in own}
    extra = [
        {**memory, "created": PADDING_DATE, "updated": PADDING_DATE, "links": []}
        for memory in others
        if memory["id"] not in seen
    ]
    return [*own, *extra]


def write_padded(labels_path: Path, out_dir: Path) -> tuple[Path, list[str]]:
    """Padded copies of a delivery label file's stores, and of the labels naming them, in `out_dir`: the new
    label file, and a line per store saying what it holds."""
    lines = _read_jsonl(labels_path)
    stores = {line["store"]: (labels_path.parent / line["store"]).resolve() for line in lines if "store" in line}
    if len(stores) < 2:
        raise ValueError(f"{labels_path}: padding needs at least two stores, found {len(stores)}")
    memories = {name: _read_jsonl(path) for name, path in stores.items()}
    out_dir.mkdir(parents=True, exist_ok=True)
    renamed: dict[str, str] = {}
    said: list[str] = []
    for name, path in stores.items():
        others = [m for other, ms in memories.items() if other != name for m in ms]
        target = out_dir / f"padded-{path.name}"
        with target.open("w", encoding="utf-8") as out:
            for memory in padded(memories[name], others):
                out.write(json.dumps(memory, ensure_ascii=False) + "\n")
        renamed[name] = target.name
        said.append(f"{target}: {len(memories[name])} memories + {len(others)} of the other stores")
    labels = out_dir / labels_path.name
    with labels.open("w", encoding="utf-8") as out:
        for line in lines:
            if "store" in line:
                line = {**line, "store": renamed[line["store"]]}
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return labels, said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=Path, required=True, help="a delivery label file with store lines")
    parser.add_argument("--out", type=Path, required=True, help="where the padded stores and labels go")
    args = parser.parse_args(argv)
    try:
        labels, said = write_padded(args.labels, args.out)
    except ValueError as error:
        parser.error(str(error))
    print("\n".join(said))
    print(f"{labels}: the labels, their store lines naming the padded stores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
