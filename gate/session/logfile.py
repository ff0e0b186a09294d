"""Appending one line to one of gate's logs (hot path): the audit log and the error log, rotated once when full.

Apart from audit.py, which redacts what it writes, so that the rules layer can name a broken rules file in the
error log without importing the secrets scanner (which reads the rules).
"""

from __future__ import annotations

import fcntl
import os
import time

from gate import fastjson as json  # json.loads and json.dumps without the json package (gate/fastjson.py)
from gate.paths import ensure_private_dir


def _open(path: str) -> int:
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


def _rotate(path: str, fd: int) -> int:
    """Rename the full log to .1 — once. Two hooks may both find it full; without the flock and the inode check
    the second renamed the fresh file over .1 and a whole generation of lines was lost. Returns an fd on the
    file that now has the name."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        current = os.stat(path)
        mine = os.fstat(fd)
        if (current.st_ino, current.st_dev) == (mine.st_ino, mine.st_dev):  # nobody rotated it meanwhile
            os.replace(path, path + ".1")
    except FileNotFoundError:
        pass  # renamed a moment ago, the new file not yet created: ours will be
    finally:
        os.close(fd)  # releases the flock
    return _open(path)


def append(path: str, line: str, max_bytes: int) -> None:
    ensure_private_dir(os.path.dirname(path))
    fd = _open(path)
    try:
        if max_bytes and os.fstat(fd).st_size > max_bytes:
            fd = _rotate(path, fd)
        os.write(fd, line.encode("utf-8", "replace"))
    finally:
        os.close(fd)


def error_line(event: str, error: str, message: str, project: str | None = None, kind: str | None = None,
               project_id: str | None = None) -> str:
    """One error-log line: where and what (the caller has made `message` safe to keep)."""
    record: dict[str, str | bool] = {
        "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z",
        "event": event,
        "error": error,
        "message": message,
    }
    project = project or os.environ.get("CLAUDE_PROJECT_DIR", "")
    if project:
        record["project"] = str(project)[:1000]
    if project_id:
        record["project_id"] = project_id[:100]
    if kind:
        record["kind"] = kind
    if os.environ.get("GATE_DOCTOR"):
        record["synthetic"] = True
    return json.dumps(record, separators=(",", ":")) + "\n"
