"""Helpers the hardening suites share: figures for the closing report, a hook run in-process, and a guard
that turns a hang into a failure."""

from __future__ import annotations

import io
import json
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

# Far beyond anything the suite runs, however loaded the machine: only a hang gets there. Never a speed check
# (speed is measured in bench/).
HANG_S = 120.0


class Hung(BaseException):
    """Raised into code still running after its hang guard's time (a BaseException: the code under test may
    catch every Exception, and a hook catches even this one; the guard fails the test either way)."""


@contextmanager
def hang_guard(what: str, seconds: float = HANG_S) -> Iterator[None]:
    """Fail the test when the block is still running after `seconds` (main thread only: SIGALRM)."""
    hung: list[bool] = []

    def interrupt(signum: int, frame: Any) -> None:
        hung.append(True)
        raise Hung

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except BaseException:
        if not hung:
            raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if hung:
        pytest.fail(f"{what}: still running after {seconds:.0f} s", pytrace=False)


def report(suite: str, figures: dict[str, Any]) -> None:
    """Print a suite's figures; with GATE_HARDENING_REPORT=FILE also append them there as a JSON line."""
    print(f"\n{suite} figures: {figures}")
    target = os.environ.get("GATE_HARDENING_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"suite": suite, **figures}) + "\n")


def hook_in_process(event: dict[str, Any]) -> str:
    """gate.hook.main() on this event with stdin/stdout swapped, as the real entry sees them; its stdout."""
    import gate.hook

    buffer = io.BytesIO()
    stdout = io.TextIOWrapper(buffer, encoding="utf-8", write_through=True)
    saved = sys.stdin, sys.stdout
    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(event).encode()), encoding="utf-8")
    sys.stdout = stdout
    try:
        assert gate.hook.main() == 0
    finally:
        sys.stdin, sys.stdout = saved
    return buffer.getvalue().decode()


def without_fix_guard(project: Any) -> None:
    """A project rules layer that turns the write-back fix guard off. For tests that end one fix turn again and
    again to reach the write-back cap (or to see each block): the same fix again is its debugging loop going on,
    which the guard defers after its first block (tests/test_fix_guard.py); with it off, each Stop is a
    consequential turn of its own."""
    from pathlib import Path

    rules = Path(project) / ".gate" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    (rules / "writeback.toml").write_text("[fix_guard]\nenabled = false\n", encoding="utf-8")


def doctor_report(gate: Any, *args: str) -> tuple[int, dict[str, Any]]:
    """`gate doctor --json` through the test's CLI runner: its exit status and its report."""
    code, out, err = gate("doctor", "--json", *args)
    assert out, err
    return code, json.loads(out)


def doctor_checks(report: dict[str, Any], check: str, status: str | None = None) -> list[dict[str, Any]]:
    """The report's lines of one check (and one status)."""
    return [c for c in report["checks"] if c["check"] == check and (status is None or c["status"] == status)]
