"""The prompts and hook events the benchmark sends. They are about the anchor memories in corpus.ANCHORS."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

# A session first asks about the payments waterfall; the follow-up stays on that topic (no shift).
NOSHIFT_SETUP = "How does the reserve account trigger work in the payment waterfall?"
NOSHIFT = "And when the waterfall reruns, does the reserve account trigger fire again for the same period?"

# A session working on the theme toggle turns to a CI failure (a shift whose hits exist at every size).
SHIFT_BEFORE = "Make the dark mode toggle follow the system theme on the settings page."
SHIFT = "The integration tests time out in CI on the postgres connection pool. Why does pytest-xdist exhaust it?"

# What `gate search` is asked (a user would type terms, not a sentence).
SEARCH_QUERY = "postgres connection pool integration tests timeout"


def session_id(label: str, index: int = 0) -> str:
    """A stable UUID per (label, index): Claude Code session ids are UUIDs."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"gate-bench/{label}/{index}"))


def prompt_event(session: str, prompt: str, transcript: Path, cwd: Path) -> bytes:
    """UserPromptSubmit stdin as the CLI sends it."""
    event = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "prompt_id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}/{prompt}")),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    return json.dumps(event).encode()


def stop_event(session: str, transcript: Path, cwd: Path, last_message: str) -> bytes:
    """Stop stdin as the CLI sends it on a turn's first Stop (not after a hook-caused continuation)."""
    event = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": last_message,
    }
    return json.dumps(event).encode()
