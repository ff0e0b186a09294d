"""Health: hook latency per event, fail-opens with the last logged error."""

from __future__ import annotations

import json
import math
import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from gate.paths import error_log_file
from gate.stats.select import Selection, number

ERROR_TAIL_BYTES = 16 * 1024


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile: a value that was actually measured, never an interpolation."""
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def latency_figures(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    by_event: dict[str, list[float]] = defaultdict(list)
    for record in records:
        latency = record.get("latency_ms")
        if isinstance(latency, int | float) and not isinstance(latency, bool):
            by_event[str(record.get("event"))].append(number(latency))
    return {
        event: {
            "n": len(values),
            "p50": round(percentile(values, 0.50), 1),
            "p95": round(percentile(values, 0.95), 1),
            "max": round(max(values), 1),
        }
        for event, values in sorted(by_event.items())
    }


def last_error(path: Path | None = None, project: Selection | str | None = None) -> dict[str, Any] | None:
    """The last line of the error log (read from its end: the log may be megabytes). The log is shared by every
    project: with a project (a selection, or one id or checkout path), lines another project wrote are passed
    over, by the project id a line names, else by its checkout path (lines from before gate named the project
    in them, and lines of doctor's own runs, are kept and skipped as they say)."""
    path = path or error_log_file()
    if isinstance(project, str):
        project = Selection(project=project, roots=(project,))
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - ERROR_TAIL_BYTES))
            lines = handle.read().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict) or data.get("synthetic") is True:
            continue
        if project is not None and (data.get("project") or data.get("project_id")) and not project.owns(data):
            continue
        return {key: data.get(key) for key in ("ts", "event", "error", "message")}
    return None


def failure_figures(failures: list[dict[str, Any]], project: Selection | None = None) -> dict[str, Any]:
    return {
        "failed_open": len(failures),
        "failed_open_by_event": dict(Counter(str(r.get("event")) for r in failures).most_common()),
        "last_error": last_error(project=project),
    }
