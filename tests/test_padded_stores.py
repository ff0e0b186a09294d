"""scripts/corpus/padded_stores.py: a split's delivery stores, each padded with the other stores' memories."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "corpus"))
import padded_stores  # the dev script, importable for its functions

from gate.replay.labels import load_labels


def _memory(memory_id: str, created: str, links: list[dict[str, str]] | None = None) -> dict[str, object]:
    return {"id": memory_id, "kind": "finding", "title": f"Fact {memory_id}", "created": created,
            "updated": created, "links": links or []}


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_each_store_gets_the_others_memories_dated_before_every_session(tmp_path: Path) -> None:
    stores = tmp_path / "stores"
    _write(stores / "a.jsonl", [_memory("m-a-1", "2026-01-02T00:00:00Z")])
    _write(stores / "b.jsonl", [_memory("m-b-1", "2026-02-03T00:00:00Z", [{"type": "relates", "id": "m-b-2"}]),
                                _memory("m-b-2", "2026-02-04T00:00:00Z")])
    labels = _write(tmp_path / "labels" / "delivery.jsonl", [
        {"store": "../stores/a.jsonl", "transcripts": ["o/a1.jsonl"]},
        {"store": "../stores/b.jsonl", "transcripts": ["p/b1.jsonl"]},
        {"transcript": "o/a1.jsonl", "prompt": 3, "memories": ["m-a-1"]},
    ])
    out = tmp_path / "out"
    written, said = padded_stores.write_padded(labels, out)
    assert len(said) == 2
    a = [json.loads(line) for line in (out / "padded-a.jsonl").read_text().splitlines()]
    assert [m["id"] for m in a] == ["m-a-1", "m-b-1", "m-b-2"]
    assert a[0]["created"] == "2026-01-02T00:00:00Z"  # the store's own memories as they were
    assert {m["created"] for m in a[1:]} == {padded_stores.PADDING_DATE} and all(m["links"] == [] for m in a[1:])
    b = [json.loads(line) for line in (out / "padded-b.jsonl").read_text().splitlines()]
    assert [m["id"] for m in b] == ["m-b-1", "m-b-2", "m-a-1"] and b[0]["links"]
    rows = [json.loads(line) for line in written.read_text().splitlines()]
    assert [r.get("store") for r in rows] == ["padded-a.jsonl", "padded-b.jsonl", None]
    loaded = load_labels(str(written), str(tmp_path / "mirror"))  # the replay reads it as any label file
    assert sorted(Path(s).name for s in set(loaded.stores.values())) == ["padded-a.jsonl", "padded-b.jsonl"]


def test_one_store_cannot_be_padded(tmp_path: Path) -> None:
    _write(tmp_path / "stores" / "a.jsonl", [_memory("m-a-1", "2026-01-02T00:00:00Z")])
    labels = _write(tmp_path / "labels" / "delivery.jsonl",
                    [{"store": "../stores/a.jsonl", "transcripts": ["o/a1.jsonl"]}])
    with pytest.raises(ValueError, match="at least two stores"):
        padded_stores.write_padded(labels, tmp_path / "out")
