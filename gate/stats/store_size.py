"""Store size by kind, scope and status, read from the memory files (the source of truth, not the index).

One project: its private and team stores and the user store. All projects: every private store that has a
project marker (and that project's team store, when it still exists), plus the user store once."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from gate.memory.model import Memory
from gate.memory.store.files import CorruptMemoryFile, iter_memories
from gate.memory.supersession import effective_status, live_supersedes
from gate.paths import ProjectPaths, user_dirs


def _stores(project: Path | None) -> list[tuple[str, Path]]:
    if project is not None:
        paths = ProjectPaths.for_cwd(project)
        return [(scope, Path(paths.store_for_scope(scope))) for scope in ("private", "team", "user")]
    projects_dir = Path(user_dirs().data, "projects")
    stores: list[tuple[str, Path]] = []
    for marker in sorted(projects_dir.glob("*/project.json")):
        stores.append(("private", marker.parent / "memories"))
        try:
            root = json.loads(marker.read_text(encoding="utf-8")).get("root")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(root, str) and root:
            stores.append(("team", Path(root) / ".gate" / "memories"))
    stores.append(("user", Path(user_dirs().data, "user", "memories")))
    return stores


def store_figures(project: Path | None) -> dict[str, Any]:
    by_kind: Counter[str] = Counter()
    by_scope: Counter[str] = Counter()
    by_status: Counter[str] = Counter()
    corrupt = 0
    seen: set[Path] = set()
    found: list[tuple[str, Memory]] = []
    for scope, directory in _stores(project):
        if directory in seen:
            continue
        seen.add(directory)
        for item in iter_memories(directory):
            if isinstance(item, CorruptMemoryFile):
                corrupt += 1
                continue
            found.append((scope, item))
    # superseded is derived from the links, as the index derives it (ids are random: one pool is fine)
    superseded = {target for _, m in found for target in live_supersedes(m.status, m.links)}
    for scope, item in found:
        status = effective_status(item.status, item.id in superseded)
        by_status[status] += 1
        if status == "active":  # what can still be delivered is what "size" means to a reader
            by_kind[item.kind] += 1
            by_scope[scope] += 1
    return {
        "active": sum(by_kind.values()),
        "by_kind": dict(by_kind.most_common()),
        "by_scope": dict(by_scope.most_common()),
        "by_status": dict(by_status.most_common()),
        "corrupt": corrupt,
    }
