"""Supersession cycles: memories that supersede one another in a ring are all superseded, so none of them is
delivered or found. `gate link` and an import refuse the link that would close one; a pulled team file, a hand
edit or a restore of an old version can still bring one in, and only this check then says so."""

from __future__ import annotations

from pathlib import Path

from gate.install.diagnose.base import Check
from gate.paths import ProjectPaths


def supersession_cycles(root: Path) -> list[Check]:
    from gate.memory.store.store import Store
    from gate.memory.supersession import cycles, live_supersedes

    try:
        memories = Store(ProjectPaths.for_cwd(root)).memories()
    except Exception as error:  # the store check reports an unreadable store
        return [Check("supersession", "info", f"supersession not checked: {type(error).__name__}: {error}")]
    graph = {m.id: live_supersedes(m.status, m.links) for m in memories}
    scope_of = {m.id: m.scope for m in memories}
    checks = []
    for ring in cycles(graph):
        members = ring[:-1]
        where = ", ".join(f"{memory_id} ({scope_of.get(memory_id, '?')})" for memory_id in members)
        checks.append(Check(
            "supersession",
            "fail",
            f"supersession cycle: {' supersedes '.join(ring)} — all {len(members)} are superseded, none is "
            f"delivered or found: {where}",
            f"decide which one is current and remove the supersedes link that points at it: `gate edit {ring[-2]}` "
            f"(delete its link to {ring[0]}), or `gate forget` the one that is wrong",
            details={"cycle": members},
        ))
    return checks
