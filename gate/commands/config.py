"""`gate config`: the settings as the CLI sees them, validated by a pydantic-settings model.

Sources, later wins: gate.defaults.DEFAULTS < the user's config.toml < the project's .gate/config.toml <
GATE_* environment variables. The hooks read the same sources with gate.settings (stdlib, hot path);
tests/test_config.py holds the two to the same answers. A project's checked-in config may not set a location
key: where private memories and logs are written is the user's decision, never a repository's.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from gate.defaults import CHOICES, DEFAULTS, LOCATION_KEYS
from gate.errors import GateError
from gate.errors import ValidationError as GateValidationError
from gate.paths import ProjectPaths, user_config_file, user_dirs
from gate.settings import to_bool, to_choice, to_int  # one parser for both loaders: hooks and this model


def _field_type(key: str, default: Any) -> Any:
    """The validated type of a setting, from its default (defaults.py is the one list of settings)."""
    if key in CHOICES:
        return Annotated[str, BeforeValidator(functools.partial(to_choice, key))]
    if isinstance(default, bool):
        return Annotated[bool, BeforeValidator(to_bool)]
    if isinstance(default, int):
        # Every whole-number setting is a count, a budget, a size or an age: none can be negative.
        return Annotated[int, BeforeValidator(to_int), Field(ge=0)]
    return type(default)


class _GateConfigBase(BaseSettings):
    model_config = SettingsConfigDict(extra="forbid", validate_default=True)


GateConfig: type[_GateConfigBase] = create_model(  # type: ignore[call-overload]
    "GateConfig",
    __base__=_GateConfigBase,
    **{key: (_field_type(key, value), value) for key, value in DEFAULTS.items()},
)


# --- sources --------------------------------------------------------------------------------------------------


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as error:
        raise GateValidationError(f"{path} is not valid TOML: {error}", "fix the file, then run this again") from None
    except OSError as error:
        raise GateValidationError(f"cannot read {path}: {error.strerror}") from None


def env_layer(environ: Mapping[str, str]) -> dict[str, str]:
    """GATE_<SETTING> variables, exactly as gate.settings reads them (upper case; other GATE_* are not settings)."""
    return {key: environ[f"GATE_{key.upper()}"] for key in DEFAULTS if f"GATE_{key.upper()}" in environ}


class _LayerSource(PydanticBaseSettingsSource):
    """One already-read layer handed to pydantic-settings, so its precedence machinery does the merging."""

    def __init__(self, settings_cls: type[BaseSettings], values: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self.values = values

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self.values)


class Layer:
    """A named source of settings, as `gate config show` reports it."""

    def __init__(self, label: str, values: dict[str, Any], path: Path | None = None) -> None:
        self.label = label
        self.values = values
        self.path = path


def _key_problems(layer: Layer, is_project: bool) -> list[GateValidationError]:
    found = []
    for key in layer.values:
        if key in LOCATION_KEYS:
            if is_project:
                found.append(GateValidationError(
                    f"{layer.path} sets {key!r}: a project's config may not move where gate keeps private "
                    "memories, state and logs",
                    f"remove {key!r} from {layer.path}; to relocate gate's state for yourself, set GATE_HOME",
                ))
            else:
                found.append(GateValidationError(
                    f"{layer.path} sets {key!r}, which is not a setting: gate's locations follow the platform's "
                    "directories",
                    "set GATE_HOME to keep all of gate's state under one directory",
                ))
        elif key not in DEFAULTS:
            found.append(GateValidationError(
                f"{layer.path}: unknown setting {key!r}",
                f"known settings: {', '.join(sorted(DEFAULTS))}",
            ))
    return found


def _validator(key: str, default: Any) -> Callable[[Any], Any]:
    if key in CHOICES:
        return functools.partial(to_choice, key)
    return to_bool if isinstance(default, bool) else to_int if isinstance(default, int) else lambda raw: raw


def _validators() -> dict[str, Callable[[Any], Any]]:
    return {key: _validator(key, value) for key, value in DEFAULTS.items()}


def _value_hint(key: str, layer: Layer) -> str:
    """How to fix a bad value, and what the hooks do meanwhile (gate.settings keeps the earlier value)."""
    default = DEFAULTS[key]
    wanted = (" or ".join(CHOICES[key]) if key in CHOICES else "true or false" if isinstance(default, bool)
              else "a whole number, 0 or more")
    where = f"set GATE_{key.upper()} to {wanted}, or unset it" if layer.path is None else (
        f"in {layer.path}, set {key} to {wanted}, or delete the line"
    )
    return f"{where}; until then the hooks skip this value and keep the one under it (by default {json.dumps(default)})"


def _value_problems(layer: Layer) -> list[GateValidationError]:
    """Every layer's values are checked, not only the winning ones, as gate.settings reads every layer too."""
    validators = _validators()
    found = []
    for key, raw in layer.values.items():
        if key not in validators:
            continue  # reported by _key_problems
        where = f"GATE_{key.upper()}" if layer.path is None else f"{layer.path}: {key}"
        try:
            value = validators[key](raw)
        except ValueError as error:
            found.append(GateValidationError(f"{where}: {error}", _value_hint(key, layer)))
            continue
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            found.append(GateValidationError(f"{where}: must not be negative, got {raw!r}", _value_hint(key, layer)))
    return found


def _read_layers(
    project_root: Path | None, env: Mapping[str, str], found: list[GateValidationError]
) -> list[Layer]:
    """The sources in precedence order (last wins); every problem in any of them is appended to `found`."""

    def read(path: Path) -> dict[str, Any]:
        try:
            return read_toml(path)
        except GateValidationError as error:
            found.append(error)
            return {}

    user_path = Path(user_config_file())
    result = [Layer("default", dict(DEFAULTS)), Layer(f"user config {user_path}", read(user_path), user_path)]
    found.extend(_key_problems(result[1], is_project=False))
    if project_root is not None:
        project_path = Path(ProjectPaths.for_cwd(project_root).project_config)
        project = Layer(f"project config {project_path}", read(project_path), project_path)
        found.extend(_key_problems(project, is_project=True))
        result.append(project)
    result.append(Layer("environment", env_layer(env)))
    for layer in result[1:]:
        found.extend(_value_problems(layer))
    return result


def layers(project_root: Path | None, environ: Mapping[str, str] | None = None) -> list[Layer]:
    """The sources in precedence order (last wins), read and checked: the first problem is raised."""
    found: list[GateValidationError] = []
    result = _read_layers(project_root, os.environ if environ is None else environ, found)
    if found:
        raise found[0]
    return result


def load_config(
    project_root: Path | None, environ: Mapping[str, str] | None = None
) -> tuple[_GateConfigBase, dict[str, str]]:
    """The validated settings and, for each, the source its value came from."""
    ordered = layers(project_root, environ)

    class _Bound(GateConfig):  # type: ignore[misc, valid-type]
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            # pydantic-settings gives the first source precedence; ours are listed lowest first.
            return tuple(_LayerSource(settings_cls, layer.values) for layer in reversed(ordered[1:]))

    try:
        config = _Bound()
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise GateValidationError(f"invalid settings: {problems}") from None
    provenance = {}
    for key in DEFAULTS:
        label = next(layer.label for layer in reversed(ordered) if key in layer.values)
        provenance[key] = f"GATE_{key.upper()}" if label == "environment" else label
    return config, provenance


def check(project_root: Path | None, environ: Mapping[str, str] | None = None) -> list[str]:
    """Every problem with the settings, as messages (empty when they are valid); used by `gate doctor`."""
    found: list[GateValidationError] = []
    _read_layers(project_root, os.environ if environ is None else environ, found)
    if not found:
        try:
            load_config(project_root, environ)
        except GateError as error:
            found.append(GateValidationError(str(error), error.hint))
    return [str(error) + (f" ({error.hint})" if error.hint else "") for error in found]


# --- command --------------------------------------------------------------------------------------------------


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "config",
        help="show, locate or check gate's settings",
        description=(
            "show: every setting, its value and where it came from (default < user config < project "
            ".gate/config.toml < GATE_* environment). path: where the config files and gate's state live. "
            "check: validate the settings; exits non-zero when they are invalid."
        ),
    )
    parser.add_argument("action", nargs="?", choices=("show", "path", "check"), default="show")
    parser.add_argument("--project", metavar="DIR", help="the project (default: the project of the cwd)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def _paths_report(project_root: Path) -> dict[str, Any]:
    dirs = user_dirs()
    project = ProjectPaths.for_cwd(project_root)
    return {
        "user_config": user_config_file(),
        "user_config_exists": os.path.isfile(user_config_file()),
        "project_config": project.project_config,
        "project_config_exists": os.path.isfile(project.project_config),
        "gate_home": os.environ.get("GATE_HOME") or None,
        "dirs": {name: getattr(dirs, name) for name in ("config", "data", "state", "cache", "log")},
    }


def run(args: argparse.Namespace) -> int:
    if args.project is not None and not Path(args.project).is_dir():
        raise GateError(f"--project {args.project}: no such directory")
    root = ProjectPaths.for_cwd(args.project).root
    if args.action == "path":
        report = _paths_report(root)
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            for name in ("user_config", "project_config"):
                state = "" if report[f"{name}_exists"] else "  (not there: defaults apply)"
                print(f"{name.replace('_', ' ')}: {report[name]}{state}")
            if report["gate_home"]:
                print(f"GATE_HOME: {report['gate_home']}")
            for name, path in report["dirs"].items():
                print(f"{name} dir: {path}")
        return 0
    if args.action == "check":
        problems = check(root)
        if args.json:
            print(json.dumps({"ok": not problems, "errors": problems}, indent=2))
        elif problems:
            for problem in problems:
                print(f"error: {problem}")
        else:
            print("settings are valid")
        return 1 if problems else 0
    config, provenance = load_config(root)
    values = config.model_dump()
    if args.json:
        print(json.dumps({"settings": values, "sources": provenance}, indent=2))
    else:
        width = max(map(len, values))
        for key, value in values.items():
            shown = json.dumps(value) if not isinstance(value, bool) else ("on" if value else "off")
            print(f"{key.ljust(width)}  {shown}  ({provenance[key]})")
    return 0
