"""Mute (hot path, standard library only): "ignore memory for now" as a behaviour.

`gate mute --session ID` sets the session ledger's `muted` flag; `gate mute` alone writes a project-wide mute
file (optionally with an end time) that every gate of every session of the project honours. Muted gates
stay silent and say so in the audit (reason SKIP_MUTED), so `gate stats` can count muted evaluations.
"""

from __future__ import annotations

import os
import time

from gate import fastjson as json  # json.loads and json.dumps without the json package (gate/fastjson.py)
from gate.paths import ProjectPaths

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any


def mute_file(paths: ProjectPaths) -> str:
    return os.path.join(paths.dirs.state, "mute", f"{paths.key}.json")


def project_mute(paths: ProjectPaths, now: float | None = None) -> dict[str, Any] | None:
    """The project's mute record while it is in force ({"since", "until"?, "root"}), else None."""
    try:
        with open(mute_file(paths), encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {"since": 0}  # an unreadable mute file still means someone asked for silence
    if not isinstance(data, dict):
        return {"since": 0}
    until = data.get("until")
    if isinstance(until, int | float) and (time.time() if now is None else now) >= until:
        return None
    return data


def muted_by(paths: ProjectPaths, ledger_muted: bool) -> str | None:
    """"session", "project" or None: why the gates are silent now."""
    if ledger_muted:
        return "session"
    return "project" if project_mute(paths) is not None else None
