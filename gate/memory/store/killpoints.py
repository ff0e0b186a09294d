"""Named points in the write path where a test stops a real writer: `GATE_KILL_AT=NAME` (or `NAME@N`, the Nth
time the point is reached) and `GATE_KILL_SIGNAL=KILL|INT` (KILL by default). The interruption tests kill a
subprocess exactly there, with no sleep deciding the moment. Unset, a point costs one environment lookup; the
write path is cold, and the hook never reaches one.
"""

from __future__ import annotations

import os

_reached: dict[str, int] = {}


def point(name: str) -> None:
    wanted = os.environ.get("GATE_KILL_AT")
    if not wanted:
        return
    at, _, nth = wanted.partition("@")
    if at != name:
        return
    _reached[name] = _reached.get(name, 0) + 1
    if _reached[name] == int(nth or 1):
        import signal

        os.kill(os.getpid(), getattr(signal, f"SIG{os.environ.get('GATE_KILL_SIGNAL', 'KILL')}"))
