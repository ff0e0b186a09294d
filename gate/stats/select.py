"""Which audit records a report covers: a time window, a project (or all), a session; never `gate doctor`'s."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate.errors import GateError
from gate.paths import ProjectPaths
from gate.project_migrate import checkouts

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
    """Which records a report covers. A project is named by its id (gate/project_id.py: one for every checkout
    of a repository, kept when the checkout moves); a record written before the audit named the id carries only
    its checkout's path, and is the project's when that path is one of `roots` (the checkout at hand, the
    repository's other checkouts, and the earlier paths the project's id file lists as aliases)."""

    since: str | None = None  # audit ts; records at or after it
    project: str | None = None  # the project's id; None: every project
    session: str | None = None
    root: str | None = None  # the checkout the report was asked from (its rules, stores and titles)
    roots: tuple[str, ...] = ()  # checkout paths of the project: how a record without an id is matched

    @classmethod
    def from_args(
        cls, since: str | None, project_dir: str | None, all_projects: bool, session: str | None
    ) -> Selection:
        cutoff = parse_since(since) if since else None
        if all_projects:
            return cls(cutoff, None, session or None)
        return cls.of_paths(ProjectPaths.for_cwd(project_dir), since=cutoff, session=session or None)

    @classmethod
    def of_paths(cls, paths: ProjectPaths, since: str | None = None, session: str | None = None) -> Selection:
        return cls(since, paths.key, session, paths.root, project_checkouts(paths))

    @property
    def project_root(self) -> Path | None:
        return Path(self.root) if self.root else None

    def owns(self, record: dict[str, Any]) -> bool:
        """Whether a record is of the selected project: by its `project_id`, else (an older record) by its path."""
        if self.project is None:
            return True
        key = record.get("project_id")
        if isinstance(key, str) and key:
            return key == self.project
        return record.get("project") in self.roots

    def describe(self) -> str:
        parts = [f"project {self.root or self.project}" if self.project else "all projects"]
        if self.session:
            parts.append(f"session {self.session}")
        if self.since:
            parts.append(f"since {self.since}")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"since": self.since, "project": self.project, "project_root": self.root, "session": self.session}


def project_checkouts(paths: ProjectPaths) -> tuple[str, ...]:
    """Every checkout path the project's records may name: the one at hand, its repository's checkouts that git
    lists now, and the project's aliases (paths whose stores joined it: a moved checkout's old place)."""
    found = [paths.root, *(alias for alias in paths.aliases if os.path.isabs(alias))]
    if paths.repository:
        found += checkouts(paths.repository)
    return tuple(dict.fromkeys(found))


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
            if (record.get("project") or record.get("project_id")) and not selection.owns(record):
                continue
            if selection.session and record.get("session") not in (None, "", selection.session):
                continue
            failures.append(record)
            continue
        if not selection.owns(record):
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
