"""MemoryIndex.naming_any answers as gate.textproc.terms would: the session start's index tier puts the
environment's facts first by one search (gate/gates/recall/standing.py) instead of tokenizing every candidate's
title and tags in Python, and must pick exactly the memories the plain check picks."""

from __future__ import annotations

import json
from pathlib import Path

from bench.corpus import Generator
from gate.memory.index.read import MemoryIndex
from gate.paths import ProjectPaths
from gate.textproc import terms

WRITTEN = [
    {"title": "Staging deploys run through deployStaging.sh", "tags": ["ops"]},
    {"title": "Upgrading the database: pg_upgrade in place", "tags": []},
    {"title": "部署到測試環境前先跑遷移", "tags": ["環境"]},
    {"title": "The parser keeps HTTPConfig2 objects", "tags": ["venv", "python"]},
    {"title": "Nothing about where it runs", "tags": ["parser"]},
    {"title": "conda envs live in ~/miniforge", "tags": ["Conda"]},
]


def test_naming_any_picks_what_the_terms_of_title_and_tags_pick(gate, project: Path, tmp_path: Path) -> None:
    memories = Generator(300, seed=11).memories()
    for extra, memory in zip(WRITTEN, memories, strict=False):
        memory.update(extra)
    source = tmp_path / "memories.jsonl"
    source.write_text("\n".join(json.dumps(m) for m in memories) + "\n", encoding="utf-8")
    code, _, err = gate("import", str(source))
    assert code == 0, err
    words = ["environment", "venv", "conda", "deploy", "staging", "upgrade", "database", "環境", "部署"]
    stems = frozenset(t for word in words for t in terms(word))
    index = MemoryIndex(ProjectPaths.for_cwd(str(project)))
    records = [r for kind in sorted({m["kind"] for m in memories}) for r in index.by_field("kind", kind, 1000)]
    assert len(records) == len(memories)
    expected = {r["id"] for r in records if set(terms(f"{r['title']} {' '.join(r.get('tags', []))}")) & stems}
    found = index.naming_any([r["id"] for r in records], ("title", "tags"), stems)
    assert found == expected
    assert len(expected) >= len(WRITTEN) - 1  # the written ones name it (all but one), and some generated ones
    assert index.naming_any([], ("title",), stems) == set() == index.naming_any(["m-x"], ("title",), [])
