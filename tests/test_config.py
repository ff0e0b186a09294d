"""Settings: the CLI's pydantic-settings model and the hooks' stdlib loader give the same answers.

Both read gate.defaults.DEFAULTS < the user's config.toml < the project's .gate/config.toml < GATE_* env.
A project's checked-in config can never move where private memories, state and logs are written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gate.commands.config import load_config
from gate.defaults import CHOICES, DEFAULTS, LOCATION_KEYS
from gate.errors import GateError
from gate.paths import ProjectPaths, user_config_file, user_dirs
from gate.settings import load_settings

Gate = Callable[..., tuple[int, str, str]]
BOOLS = [key for key, value in DEFAULTS.items() if isinstance(value, bool)]
INTS = [key for key, value in DEFAULTS.items() if isinstance(value, int) and not isinstance(value, bool)]
WORDS = sorted(CHOICES)  # settings that take one of a few words


def write_toml(path: Path, values: dict[str, Any] | None) -> None:
    if values is None:
        if path.exists():
            path.unlink()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomli_w.dumps(values), encoding="utf-8")


@dataclass(frozen=True)
class Refused:
    """A loader's refusal of the inputs, by its message (only the refusal error is caught, nothing else)."""

    message: str


def both(project: Path, user: dict | None, proj: dict | None, env: dict[str, str]) -> tuple[Any, Any]:
    """(stdlib result or Refused, pydantic result or Refused) for the same inputs."""
    write_toml(Path(user_config_file()), user)
    write_toml(project / ".gate" / "config.toml", proj)
    try:
        hot: Any = load_settings(project, environ=env)
    except ValueError as error:  # how the hooks' loader refuses a value (the hooks then keep the default)
        hot = Refused(str(error))
    try:
        cold: Any = load_config(project, environ=env)[0].model_dump()
    except GateError as error:
        cold = Refused(str(error))
    return hot, cold


def assert_both_refuse_the_same_setting(hot: Any, cold: Any) -> None:
    """Both refused, and for the same setting: the stdlib loader's message starts with the setting's name,
    the CLI's names it (or its GATE_ variable). Any other failure is a bug, not a refusal."""
    assert isinstance(hot, Refused) and isinstance(cold, Refused), (hot, cold)
    setting = hot.message.partition(":")[0]
    assert setting in DEFAULTS, f"not a refusal of a setting: {hot.message!r}"
    assert f"{setting}:" in cold.message or f"GATE_{setting.upper()}:" in cold.message, (hot, cold)


def test_model_has_exactly_the_default_settings() -> None:
    config, sources = load_config(None, environ={})
    assert config.model_dump() == DEFAULTS
    assert set(sources.values()) == {"default"}
    assert not LOCATION_KEYS & set(DEFAULTS)


def test_keys_are_all_assumed_bool_int_or_a_choice() -> None:
    # The agreement below covers these three kinds; a setting of another kind needs its own cases here.
    assert set(BOOLS) | set(INTS) | set(WORDS) == set(DEFAULTS)
    assert all(DEFAULTS[key] == CHOICES[key][0] for key in WORDS)  # the default is the first word


CASES: list[tuple[str, dict | None, dict | None, dict[str, str]]] = [
    ("defaults", None, None, {}),
    ("empty files", {}, {}, {}),
    ("user file", {INTS[0]: 3, BOOLS[0]: False}, None, {}),
    ("project over user", {INTS[0]: 3, BOOLS[0]: False}, {INTS[0]: 4}, {}),
    ("env over project", {INTS[0]: 3}, {INTS[0]: 4, BOOLS[0]: True}, {f"GATE_{INTS[0].upper()}": "9"}),
    ("string bools in toml", {BOOLS[0]: "off"}, {BOOLS[-1]: "Yes"}, {}),
    ("env bools", None, None, {f"GATE_{key.upper()}": v for key, v in zip(BOOLS, ["0", "ON", " no "], strict=False)}),
    ("empty env bool is off", None, None, {f"GATE_{BOOLS[0].upper()}": ""}),
    (
        "env ints with spaces and underscores",
        None,
        None,
        {f"GATE_{INTS[0].upper()}": " 12 ", f"GATE_{INTS[-1].upper()}": "5_000"},
    ),
    ("whole float in toml", {INTS[0]: 7.0}, None, {}),
    ("zero", None, {INTS[0]: 0}, {}),
    ("lower-case env names are not gate's", None, None, {f"gate_{INTS[0]}": "99"}),
    ("other GATE_ variables are not settings", None, None, {"GATE_HOME": "/elsewhere", "GATE_DOCTOR": "1"}),
    ("bad bool in toml", {BOOLS[0]: "maybe"}, None, {}),
    ("bad bool in env", None, None, {f"GATE_{BOOLS[0].upper()}": "2"}),
    ("bad int in env", None, None, {f"GATE_{INTS[0].upper()}": "ten"}),
    ("bool for an int", None, {INTS[0]: True}, {}),
    ("bad value even when overridden", {INTS[0]: "x"}, None, {f"GATE_{INTS[0].upper()}": "3"}),
    ("a choice in any case", {WORDS[0]: CHOICES[WORDS[0]][1].upper()}, None, {}),
    ("a choice in env over project", None, {WORDS[0]: CHOICES[WORDS[0]][1]},
     {f"GATE_{WORDS[0].upper()}": f" {CHOICES[WORDS[0]][-1]} "}),
    ("a word that is no choice", None, {WORDS[0]: "sometimes"}, {}),
    ("a bool for a choice", None, {WORDS[0]: True}, {}),
    ("an empty choice in env", None, None, {f"GATE_{WORDS[0].upper()}": ""}),
]


@pytest.mark.parametrize(("name", "user", "proj", "env"), CASES, ids=[c[0] for c in CASES])
def test_pydantic_model_and_stdlib_loader_agree(project: Path, name: str, user, proj, env) -> None:
    hot, cold = both(project, user, proj, env)
    if isinstance(hot, Refused) or isinstance(cold, Refused):
        assert_both_refuse_the_same_setting(hot, cold)
    else:
        assert hot == cold


# Inputs both loaders must refuse: a fractional number for a count, a negative count.
OUT_OF_RANGE = [
    ("fractional int", {INTS[0]: 5.5}),
    ("negative int", {INTS[0]: -1}),
]


@pytest.mark.parametrize(("name", "proj"), OUT_OF_RANGE, ids=[c[0] for c in OUT_OF_RANGE])
def test_both_refuse_out_of_range_numbers(project: Path, name: str, proj: dict) -> None:
    hot, cold = both(project, None, proj, {})
    assert_both_refuse_the_same_setting(hot, cold)


_bool_forms = st.sampled_from([True, False, "on", "off", "yes", "no", "1", "0", "true", "FALSE"])
_int_forms = st.integers(min_value=0, max_value=10**7).flatmap(lambda n: st.sampled_from([n, str(n), float(n)]))


def _choice_forms(key: str) -> st.SearchStrategy[str]:
    return st.sampled_from(CHOICES[key]).flatmap(lambda word: st.sampled_from([word, word.upper(), f" {word}"]))


def _as_env(value: Any) -> str:
    """An environment variable can only carry text."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return str(int(value))
    return str(value)


def _layer(string_only: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    def form(key: str) -> st.SearchStrategy[Any]:
        base = _bool_forms if key in BOOLS else _choice_forms(key) if key in WORDS else _int_forms
        return base.map(_as_env) if string_only else base

    return st.fixed_dictionaries({}, optional={key: form(key) for key in DEFAULTS})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=_layer(), proj=_layer(), env=_layer(string_only=True))
def test_agreement_on_generated_layers(project: Path, user: dict, proj: dict, env: dict) -> None:
    environ = {f"GATE_{key.upper()}": value for key, value in env.items()}
    hot, cold = both(project, user, proj, environ)
    assert hot == cold
    for key in DEFAULTS:  # and the precedence is the documented one
        expected = next((layer[key] for layer in (env, proj, user) if key in layer), DEFAULTS[key])
        if isinstance(DEFAULTS[key], bool):
            assert hot[key] is (str(expected).strip().lower() in {"1", "true", "yes", "on"})
        elif key in WORDS:
            assert hot[key] == str(expected).strip().lower()
        else:
            assert hot[key] == int(float(expected))


# --- a project's config cannot move private state ---------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(LOCATION_KEYS))
def test_project_config_cannot_move_private_state(project: Path, key: str, tmp_path: Path) -> None:
    elsewhere = tmp_path / "attacker-controlled"
    write_toml(project / ".gate" / "config.toml", {key: str(elsewhere), INTS[0]: 2})
    with pytest.raises(GateError) as refused:
        load_config(project, environ={})
    assert key in str(refused.value) and "project" in str(refused.value)
    assert refused.value.hint and "GATE_HOME" in refused.value.hint
    # The hooks ignore the key (and keep the rest); the locations stay the user's.
    hot = load_settings(project, environ={})
    assert key not in hot and hot[INTS[0]] == 2
    paths = ProjectPaths.for_cwd(project)
    for location in (Path(paths.private_store), Path(paths.index_dir), Path(user_dirs().state), Path(user_dirs().log)):
        assert not str(location).startswith(str(elsewhere))
        assert not str(location).startswith(str(project))


def test_user_config_location_key_is_explained(project: Path) -> None:
    write_toml(Path(user_config_file()), {"data_dir": "/tmp/x"})
    with pytest.raises(GateError) as refused:
        load_config(project, environ={})
    assert "GATE_HOME" in (refused.value.hint or "")


def test_unknown_key_is_reported_with_its_file(project: Path) -> None:
    write_toml(project / ".gate" / "config.toml", {"writeback_cpa": 3})
    with pytest.raises(GateError) as refused:
        load_config(project, environ={})
    assert "writeback_cpa" in str(refused.value) and "config.toml" in str(refused.value)
    assert "writeback_cap" in (refused.value.hint or "")


def test_toml_syntax_error_is_reported(project: Path) -> None:
    (project / ".gate").mkdir()
    (project / ".gate" / "config.toml").write_text("writeback_cap = = 3\n")
    with pytest.raises(GateError) as refused:
        load_config(project, environ={})
    assert "not valid TOML" in str(refused.value)


# --- the command ------------------------------------------------------------------------------------------------


def test_config_show_json_names_sources(gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_toml(project / ".gate" / "config.toml", {INTS[0]: 2})
    monkeypatch.setenv(f"GATE_{BOOLS[0].upper()}", "off")
    code, out, _ = gate("config", "show", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["settings"][INTS[0]] == 2 and report["settings"][BOOLS[0]] is False
    assert report["sources"][INTS[0]].startswith("project config")
    assert report["sources"][BOOLS[0]] == f"GATE_{BOOLS[0].upper()}"
    code, text, _ = gate("config")
    assert code == 0 and INTS[0] in text and "(default)" in text


def test_config_path_json(gate: Gate, project: Path) -> None:
    code, out, _ = gate("config", "path", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["user_config"] == str(Path(user_config_file()))
    assert report["project_config"] == str(project / ".gate" / "config.toml")
    assert report["project_config_exists"] is False
    assert set(report["dirs"]) == {"config", "data", "state", "cache", "log"}


def test_config_check_exit_codes(gate: Gate, project: Path) -> None:
    code, out, _ = gate("config", "check", "--json")
    assert code == 0 and json.loads(out) == {"ok": True, "errors": []}
    write_toml(project / ".gate" / "config.toml", {"home": "/tmp/elsewhere"})
    code, out, _ = gate("config", "check", "--json")
    assert code != 0
    report = json.loads(out)
    assert report["ok"] is False and "home" in report["errors"][0]
    code, _, err = gate("config", "show")
    assert code != 0 and "hint:" in err
