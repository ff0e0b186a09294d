"""What a new user can get wrong at the command line, each met with a clear refusal or note (issue #32, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize("where", ["home", "root"])
def test_remember_outside_any_project_is_refused(where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`gate remember` run in the home directory (or /) with no git checkout made a store for it, which no
    session reads; it is refused with a hint, and nothing is written. With --project it is the user's choice."""
    from gate.cli import main
    from gate.paths import user_dirs

    directory = Path.home() if where == "home" else Path("/")
    monkeypatch.chdir(directory)
    code = main(["remember", "Deploys need approval from the release manager"])
    err = capsys.readouterr().err
    assert code != 0 and "is not a project" in err and "--project DIR" in err
    assert not Path(user_dirs().data).exists() or not any(Path(user_dirs().data).rglob("*.toml"))
    if where == "home":
        assert main(["remember", "Deploys need approval from the release manager", "--project", str(directory)]) == 0
