"""Recent hook failures in gate's error log: this project's only (the log is shared by every project), not
doctor's own synthetic runs, not a bad setting or rules layer the hook skipped (the config and rules checks
report those while they last), and none from before `gate doctor --clear-errors`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from gate.install.diagnose.base import Check
from gate.paths import ProjectPaths, ensure_private_dir, error_log_file, replace_file


def parse(line: str) -> dict[str, Any]:
    """One error-log line as a record ({} for a line that is not a JSON object: still a failure)."""
    try:
        record = json.loads(line)
    except ValueError:
        return {}
    return record if isinstance(record, dict) else {}


def _same_project(recorded: str, root: Path) -> bool:
    return os.path.realpath(recorded) == os.path.realpath(root)


def counts_as_failure(record: dict[str, Any], root: Path) -> bool:
    """Whether an error-log record is a real fail-open of this project's hooks. A line without a project
    (written by an older gate) cannot be told apart, so it counts."""
    if record.get("synthetic") or record.get("kind") in ("setting", "rules") or record.get("error") == "PluginNotReady":
        return False
    project = record.get("project")
    return not (isinstance(project, str) and project and not _same_project(project, root))


def _ack_file(root: Path) -> Path:
    paths = ProjectPaths.for_cwd(root)
    return Path(paths.dirs.state) / "doctor" / f"{paths.key}.json"


def cleared_at(root: Path) -> str:
    """When this project's failures were last acknowledged ("" if never), as the log's timestamps."""
    try:
        data = json.loads(_ack_file(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(data.get("errors_cleared", "")) if isinstance(data, dict) else ""


def clear(root: Path) -> str:
    """Acknowledge this project's failures so far: doctor counts only later ones. The shared log is kept."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z"
    path = _ack_file(root)
    ensure_private_dir(path.parent)
    replace_file(str(path), json.dumps({"errors_cleared": stamp, "root": str(root)}) + "\n")
    return stamp


def recent_failures(root: Path, hours: float = 24) -> list[Check]:
    """This project's hook failures in the error log (each one a turn that went on without gate)."""
    try:
        lines = Path(error_log_file()).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    cutoff = max(time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - hours * 3600)), cleared_at(root))
    recent = []
    for line in lines:
        if not line.strip():
            continue
        record = parse(line)
        stamp = str(record.get("ts", "")) if record else line[:20]
        if stamp > cutoff and counts_as_failure(record, root):
            recent.append(line)
    if not recent:
        return []
    return [
        Check(
            "errors",
            "warn",
            f"{len(recent)} hook failure{'' if len(recent) == 1 else 's'} of this project in the last {hours:g} h; "
            f"the last: {recent[-1][:300]}",
            f"all of them: {error_log_file()}; once you have fixed the cause, `gate doctor --clear-errors` "
            "stops counting these (the log itself is kept)",
        )
    ]
