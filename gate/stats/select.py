"""Which audit records a report covers: a time window, a project (or all), a session; never `gate doctor`'s."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate.errors import GateError
from gate.paths import ProjectPaths

_RELATIVE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?Z?$")


def iso_utc(epoch: float) -> str:
    """The audit's own timestamp format, so a cutoff compares with `ts` as a plain string."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + "Z"


def parse_since(text: str, now: float | None = None) -> str:
    """`7d`, `12h`, `30m`, `2w`, or a UTC date/datetime (`2025-11-01`, `2025-11-01T08:00`) → an audit ts."""
    match = _RELATIVE.match(text)
    if match:
        seconds = int(match.group(1)) * _UNIT_SECONDS[match.group(2).lower()]
        return iso_utc((time.time() if now is None else now) - seconds)
    value = text.strip()
    if _DATE.match(value):
        value = value.rstrip("Z").replace(" ", "T")
        date, _, clock = value.partition("T")
        parts = [*clock.split(":"), "00", "00"][:3] if clock else ["00", "00", "00"]
        try:
            parsed = time.strptime(f"{date}T{':'.join(parts)}", "%Y-%m-%dT%H:%M:%S")
        except ValueError:
            pass
        else:
            return time.strftime("%Y-%m-%dT%H:%M:%S", parsed) + "Z"
    raise GateError(f"cannot read --since {text!r}", hint="write a span such as 7d, 12h, 2w, or a UTC date 2025-11-01")


@dataclass(frozen=True)
class Selection:
    since: str | None = None  # audit ts; records at or after it
    project: str | None = None  # project root as the audit writes it; None: every project
    session: str | None = None

    @classmethod
    def from_args(
        cls, since: str | None, project_dir: str | None, all_projects: bool, session: str | None
    ) -> Selection:
        project = None if all_projects else str(ProjectPaths.for_cwd(project_dir).root)
        return cls(parse_since(since) if since else None, project, session or None)

    @property
    def project_root(self) -> Path | None:
        return Path(self.project) if self.project else None

    def describe(self) -> str:
        parts = [f"project {self.project}" if self.project else "all projects"]
        if self.session:
            parts.append(f"session {self.session}")
        if self.since:
            parts.append(f"since {self.since}")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"since": self.since, "project": self.project, "session": self.session}


def is_failed_open(record: dict[str, Any]) -> bool:
    return record.get("decision") == "failed_open" or record.get("reason") == "FAILED_OPEN"


def select(records: list[dict[str, Any]], selection: Selection) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(evaluations, fail-opens) in the selection, oldest first; synthetic (`gate doctor`) records never count.

    A fail-open is logged before its event is parsed, so it has no project or session: it is counted in the
    time window whatever the project, unless it does name one that differs."""
    evaluations: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    for record in records:
        if record.get("synthetic") is True:
            continue
        ts = record.get("ts")
        if selection.since and (not isinstance(ts, str) or ts < selection.since):
            continue
        if is_failed_open(record):
            if selection.project and record.get("project") not in (None, "", selection.project):
                continue
            if selection.session and record.get("session") not in (None, "", selection.session):
                continue
            failures.append(record)
            continue
        if selection.project and record.get("project") != selection.project:
            continue
        if selection.session and record.get("session") != selection.session:
            continue
        evaluations.append(record)
    return evaluations, failures


def ids(value: Any) -> list[str]:
    """A record's id list, tolerant of a damaged or hand-edited line."""
    return [str(item) for item in value] if isinstance(value, list) else []


def number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
