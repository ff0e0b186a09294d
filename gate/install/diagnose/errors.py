"""Recent hook failures in gate's error log."""

from __future__ import annotations

import json
import time
from pathlib import Path

from gate.install.diagnose.base import Check
from gate.paths import error_log_file


def recent_failures(hours: float = 24) -> list[Check]:
    """Hook failures in the error log (each one a turn that went on without gate)."""
    try:
        lines = Path(error_log_file()).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - hours * 3600))
    recent = []
    for line in lines:
        try:
            stamp = str(json.loads(line).get("ts", ""))
        except ValueError:
            stamp = line[:20]
        if stamp >= cutoff and '"PluginNotReady"' not in line:  # the first-use notice is not a failure
            recent.append(line)
    if not recent:
        return []
    return [
        Check(
            "errors",
            "warn",
            f"{len(recent)} hook failure(s) in the last {hours:g} h; the last: {recent[-1][:300]}",
            f"all of them: {error_log_file()}",
        )
    ]
