"""The rules cache of one process follows the user layer it reads: a process whose GATE_HOME changes (the
in-process tests, a replay) is not handed the table another home's rules made."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.paths import user_dirs
from gate.rules import load_rules


def test_another_home_gets_its_own_user_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = tmp_path / "first-home", tmp_path / "second-home"
    monkeypatch.setenv("GATE_HOME", str(first))
    rules_dir = Path(user_dirs().config) / "rules"
    rules_dir.mkdir(parents=True)
    (rules_dir / "search.toml").write_text("[boost]\ntitle = 9.0\n")
    assert load_rules("search")["boost"]["title"] == 9.0
    monkeypatch.setenv("GATE_HOME", str(second))  # no user rules here: gate's own value
    assert load_rules("search")["boost"]["title"] == 2.5


def test_a_user_rule_holding_a_date_loads_though_the_snapshot_cannot_keep_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The snapshot is marshal, which writes no TOML date: the rules are then parsed at each call, never refused.
    monkeypatch.setenv("GATE_HOME", str(tmp_path / "home"))
    rules_dir = Path(user_dirs().config) / "rules"
    rules_dir.mkdir(parents=True)
    (rules_dir / "search.toml").write_text("[boost]\ntitle = 9.0\n\n[notes]\nreviewed = 2026-11-30\n")
    first = load_rules("search")
    assert first["boost"]["title"] == 9.0
    assert str(first["notes"]["reviewed"]) == "2026-11-30"
    assert load_rules("search")["boost"]["title"] == 9.0
