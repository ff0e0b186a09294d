"""The memory store and its index: counts, corrupt files, an index behind the files."""

from __future__ import annotations

from pathlib import Path

from gate.install.diagnose.base import Check
from gate.paths import ProjectPaths


def store_health(root: Path) -> list[Check]:
    try:
        from gate.memory.store.store import health
    except ImportError as error:
        return [Check("store", "warn", f"store health is not available in this version ({error})")]
    try:
        report = health(ProjectPaths.for_cwd(root))
    except Exception as error:
        return [Check("store", "fail", f"cannot read the memory store: {type(error).__name__}: {error}")]
    checks = []
    counts = report.get("counts", {})
    total = sum(counts.values()) if isinstance(counts, dict) else 0
    summary = ", ".join(f"{n} {scope}" for scope, n in sorted(counts.items())) or "none yet"
    checks.append(Check("store", "ok", f"memories: {total} ({summary})", details=report))
    for item in report.get("corrupt", []):
        checks.append(
            Check(
                "store",
                "warn",
                f"corrupt memory file skipped: {item.get('path')}: {item.get('error')}",
                "fix or delete it by hand",
            )
        )
    # No memory files and nothing indexed: there is nothing for the index to catch up with, whether or not it
    # exists yet (the first write or search makes it), so a fresh install's store is not "behind".
    empty = total == 0 and not report.get("corrupt") and not report.get("indexed")
    if report.get("index_behind") and not empty:
        checks.append(
            Check(
                "store",
                "warn",
                "the search index is behind the memory files",
                "run `gate reindex` (searches also catch up)",
            )
        )
    return checks
