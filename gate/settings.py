"""Settings for the hot path: the same sources as the CLI's pydantic model, read with the standard library.

Order, later wins: gate.defaults < user config.toml < project .gate/config.toml < GATE_* environment.
tests/test_config.py checks that this loader and the pydantic model agree.
"""

from __future__ import annotations

import os

from gate.defaults import CHOICES, DEFAULTS, LOCATION_KEYS
from gate.paths import user_config_file

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def to_bool(raw: Any) -> bool:
    """on/off as people write it (true, false, yes, no, on, off, 1, 0; empty is off)."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int | str):
        text = str(raw).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    raise ValueError(f"expected on/off (true, false, yes, no, 1, 0), got {raw!r}")


def to_int(raw: Any) -> int:
    """A whole number: an int, a float with nothing after the point, or text of digits."""
    if isinstance(raw, bool):
        raise ValueError(f"expected a whole number, got {raw!r}")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str):
        try:
            return int(raw)
        except ValueError:
            pass
    raise ValueError(f"expected a whole number, got {raw!r}")


def to_choice(key: str, raw: Any) -> str:
    """One of the words a choice setting takes (gate.defaults.CHOICES), in any case."""
    allowed = CHOICES[key]
    if isinstance(raw, str) and raw.strip().lower() in allowed:
        return raw.strip().lower()
    raise ValueError(f"expected one of {', '.join(allowed)}, got {raw!r}")


def _coerce(key: str, raw: Any) -> Any:
    default = DEFAULTS[key]
    try:
        if key in CHOICES:
            return to_choice(key, raw)
        if isinstance(default, bool):
            return to_bool(raw)
        if isinstance(default, int):
            value = to_int(raw)
            if value < 0:
                raise ValueError(f"expected zero or more, got {value}")
            return value
    except ValueError as error:
        raise ValueError(f"{key}: {error}") from None
    return raw


def _read_toml(path: str) -> dict[str, Any]:
    if not os.path.isfile(path):
        return {}  # the common case: no config file, and no tomllib import on the hot path
    import tomllib

    with open(path, "rb") as handle:
        return tomllib.load(handle)


def load_settings(
    project_root: str | os.PathLike[str] | None = None,
    environ: dict[str, str] | None = None,
    problems: list[str] | None = None,
) -> dict[str, Any]:
    """Resolved settings. Unknown keys are ignored here (the CLI's `gate config check` reports them).

    A bad value raises ValueError — unless `problems` is given: then the value is left at what the earlier
    sources said, and the problem is appended there. The hooks do that, so that a typo in a config file
    costs one setting (and a line in the error log), not every gate."""
    env = os.environ if environ is None else environ
    resolved = dict(DEFAULTS)

    def apply(key: str, raw: Any, source: str) -> None:
        try:
            resolved[key] = _coerce(key, raw)
        except (ValueError, TypeError) as error:
            if problems is None:
                raise
            problems.append(f"{source}: {error}")

    sources = [user_config_file()]
    if project_root is not None:
        sources.append(os.path.join(project_root, ".gate", "config.toml"))
    for index, name in enumerate(sources):
        try:
            layer = _read_toml(name)
        except (OSError, ValueError) as error:
            if problems is None:
                raise
            problems.append(f"{name}: {error}")
            continue
        if index > 0:
            layer = {k: v for k, v in layer.items() if k not in LOCATION_KEYS}
        for key, value in layer.items():
            if key in DEFAULTS:
                apply(key, value, name)
    for key in DEFAULTS:
        raw = env.get(f"GATE_{key.upper()}")
        if raw is not None:
            apply(key, raw, f"GATE_{key.upper()}")
    return resolved
