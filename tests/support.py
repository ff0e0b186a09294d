"""Helpers the hardening suites share: figures for the closing report, and a hook run in-process."""

from __future__ import annotations

import io
import json
import os
import sys
from typing import Any


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
