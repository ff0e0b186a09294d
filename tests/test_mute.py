"""`gate mute`: its status tells every mute in force, and a mute that would end before it starts is refused."""

from __future__ import annotations

import json

import pytest


def test_mute_status_shows_session_mutes(gate) -> None:
    """`gate mute --status` outside the session reports a session's own mute, not only the project's."""
    code, out, err = gate("mute", "--session", "sess-quiet")
    assert code == 0, err
    code, out, _ = gate("mute", "--status")
    assert code == 0
    assert "the project is not muted, 1 session of it is: sess-quiet" in out
    code, out, _ = gate("mute", "--status", "--json")
    assert json.loads(out)["muted_sessions"] == ["sess-quiet"]
    gate("unmute", "--session", "sess-quiet")
    code, out, _ = gate("mute", "--status")
    assert "gate: not muted" in out


@pytest.mark.parametrize("duration", ["0m", "0h", "0d0h"])
def test_mute_for_nothing_is_refused(gate, duration: str) -> None:
    code, out, err = gate("mute", "--for", duration)
    assert code != 0 and "before it starts" in err and "hint:" in err
    code, out, _ = gate("mute", "--status")
    assert "not muted" in out
