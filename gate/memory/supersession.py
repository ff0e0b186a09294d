"""The one rule of supersession (hot path: no imports): a memory is superseded while a memory that is not
forgotten links to it with `supersedes`.

Nothing stores the result. The index derives it whenever it catches up with the files (gate/memory/index.py),
the cue table when it rebuilds (gate/memory/cue_build.py), and the commands that read files
(gate.memory.store.effective_statuses) — all from these two functions. So a link written by `gate remember
--supersedes`, an import, a `git pull` or a hand edit takes effect the same way, and forgetting the successor
makes the memory it replaced current again (unless another live successor still supersedes it).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any


def live_supersedes(status: str, links: list[Any]) -> list[str]:
    """What a memory replaces: its `supersedes` targets, unless it is forgotten. `links` are Link objects or
    {type, target} tables."""
    if status == "forgotten":
        return []
    targets = []
    for link in links:
        link_type, target = (link["type"], link["target"]) if isinstance(link, dict) else (link.type, link.target)
        if link_type == "supersedes":
            targets.append(target)
    return targets


def effective_status(file_status: str, superseded: bool) -> str:
    """The status readers see: forgotten as written; otherwise superseded exactly while a live successor exists
    (a file's own `status = "superseded"`, written by earlier versions, no longer decides anything)."""
    if file_status == "forgotten":
        return "forgotten"
    return "superseded" if superseded else "active"
