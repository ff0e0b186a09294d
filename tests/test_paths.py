"""gate/paths.py computes every location with os.path (the hook cannot afford pathlib or platformdirs): it
must agree with platformdirs, and a project's key must stay what it was (private stores are keyed by it)."""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import platformdirs
import pytest

from gate.paths import APP_NAME, ProjectPaths, project_key, project_root, user_dirs


def test_user_dirs_follow_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GATE_HOME")
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    dirs = user_dirs()
    assert dirs.config == platformdirs.user_config_dir(APP_NAME, appauthor=False)
    assert dirs.data == platformdirs.user_data_dir(APP_NAME, appauthor=False)
    assert dirs.state == platformdirs.user_state_dir(APP_NAME, appauthor=False)
    assert dirs.cache == platformdirs.user_cache_dir(APP_NAME, appauthor=False)
    monkeypatch.setenv("XDG_DATA_HOME", "/somewhere/data")
    assert user_dirs().data == platformdirs.user_data_dir(APP_NAME, appauthor=False)


def test_gate_home_relocates_everything(isolated_home: Path) -> None:
    dirs = user_dirs()
    for name in ("config", "data", "state", "cache", "log"):
        assert Path(getattr(dirs, name)).is_relative_to(isolated_home)


def _regex_key(root: str) -> str:
    """How keys were made before the hook dropped this regex; existing private stores live under them."""
    import hashlib

    slug = re.sub(r"[^a-z0-9]+", "-", os.path.basename(root).lower()).strip("-")[:40] or "root"
    return f"{slug}-{hashlib.sha256(root.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"


def test_project_key_is_stable() -> None:
    rng = random.Random(2)
    alphabet = "abcXYZ019 -_.é\u00a0K\u212a日ß"
    names = ["my-project", "My Project (copy)", "---", "", "日本", "a" * 60]
    names += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 50))) for _ in range(2000)]
    for name in names:
        root = f"/work/{name}"
        assert project_key(root) == _regex_key(root), repr(name)


def test_project_root_is_the_git_top_level(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    (top / ".git").mkdir(parents=True)
    (top / "src" / "pkg").mkdir(parents=True)
    assert project_root(top / "src" / "pkg") == str(top.resolve())
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_root(plain) == str(plain.resolve())
    paths = ProjectPaths.for_cwd(top / "src")
    assert paths.team_store == str(top.resolve() / ".gate" / "memories")


def test_an_id_file_reads_as_a_person_may_write_it() -> None:
    from gate.paths import id_file_text, parse_id_file

    assert parse_id_file(id_file_text("billing-0a1b2c3d4e5f", ["/old/billing"])) == (
        "billing-0a1b2c3d4e5f", ("/old/billing",))
    assert parse_id_file("id=Billing-1\nalias=/a b/c\n# alias = /not/this\nalias   =   /x=y\n") == (
        "billing-1", ("/a b/c", "/x=y"))
    for broken in ("", "alias = /a\n", "id = ../elsewhere\n", "id = a/b\n", "id = " + "a" * 81 + "\n"):
        assert parse_id_file(broken) is None, broken  # never a path of its own: the id names a directory
