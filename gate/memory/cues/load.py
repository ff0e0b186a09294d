"""The project's cue table as a gate loads it (hot path): the shards as they are (gate/memory/cues/shards.py), or
rebuilt first (gate/memory/cues/build.py) when the store changed and that is cheap, else rebuilt in the background.

Apart from the reader so that the builder, which writes the reader's format, does not import back what imports it.
"""

from __future__ import annotations

import os

from gate.memory.cues.shards import Table, read_json, stale_scopes, table_dir

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from gate.paths import ProjectPaths


def load(paths: ProjectPaths, defaults: dict[str, list[str]]) -> Table:
    """The project's cue table: rebuilt first when the store changed and that is cheap, else in the background."""
    head = read_json(os.path.join(table_dir(paths), "head.json"))
    if not stale_scopes(head, paths, defaults):
        return Table(paths, head)
    from gate.memory.cues import build as cue_build  # only when a store changed

    # counted now, not read from the head: a table built when the store was small would have the first hook
    # after a large import or pull rebuild all of it inline (seconds, against the hook's timeout)
    if cue_build.small_store(paths):
        return Table(paths, cue_build.rebuild(paths, defaults))
    cue_build.spawn_rebuild(paths)
    return Table(paths, head if head.get("defaults") == defaults else {})
