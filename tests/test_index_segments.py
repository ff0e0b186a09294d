"""The index a bulk import leaves is one tantivy segment (issue 31): a search in a fresh process pays for every
segment it opens, and the writer's old 15 MB budget cut 100,000 memories into 9 of them."""

from __future__ import annotations

import json
from pathlib import Path

import tantivy

from bench.corpus import Generator
from gate.memory.index.read import MemoryIndex
from gate.memory.index.schema import schema
from gate.paths import ProjectPaths


def test_a_bulk_import_leaves_one_segment(gate, project: Path, tmp_path: Path) -> None:
    memories = Generator(6000, seed=3).memories()  # 15 MB of writer budget held ~4,400 of them
    source = tmp_path / "memories.jsonl"
    source.write_text("\n".join(json.dumps(memory) for memory in memories) + "\n", encoding="utf-8")
    code, _, err = gate("import", str(source))
    assert code == 0, err
    index = MemoryIndex(ProjectPaths.for_cwd(str(project)))
    assert index.num_docs() == len(memories)
    assert tantivy.Index(schema(), path=index.dir, reuse=True).searcher().num_segments == 1
