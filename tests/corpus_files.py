"""The corpus of real sessions beside the checkout (../shared/corpora/sessions), as the tests that walk it read
it: raw transcripts (`.jsonl`), gzip-compressed ones (`.jsonl.gz`: Claude Code transcripts and Codex CLI
rollouts, the corpus README says how they are trimmed), and exports (converted by scripts/corpus). Every test
that uses it skips where it is absent."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SESSIONS = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "sessions"


def transcripts() -> list[Path]:
    """Every raw session file, plain or compressed, sorted."""
    if not SESSIONS.is_dir():
        return []
    return sorted(p for p in SESSIONS.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz")))


def read_bytes(path: Path) -> bytes:
    if path.name.endswith(".gz"):
        with gzip.open(path, "rb") as handle:
            return handle.read()
    return path.read_bytes()


def entries(path: Path) -> Iterator[dict[str, Any]]:
    """The transcript entries of a session file as the hooks read them: a Codex rollout's lines through
    gate/hosts/codex/rollout.py, a line that is no JSON object left out."""
    import json

    from gate.hosts.codex import rollout

    for raw in read_bytes(path).splitlines():
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict) and rollout.is_rollout_line(entry):
            entry = rollout.entry(entry)
        if isinstance(entry, dict):
            yield entry
