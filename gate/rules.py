"""Behaviour as data: rules/*.toml shipped with gate, overridden per user and per project (hot path, stdlib).

Lookup order, later wins: the shipped rules directory, `<user config>/rules/`, `<project>/.gate/rules/`.
Tables merge key by key; any other value (lists included) is replaced whole, so a user can restate a list.
"""

from __future__ import annotations

import os
import sys
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

from gate.paths import user_dirs


def shipped_rules_dir() -> Path:
    """The rules that ship with gate: the checkout's rules/ (editable install, plugin) or the wheel's data."""
    override = os.environ.get("GATE_RULES_DIR", "").strip()
    if override:
        return Path(override)
    checkout = Path(__file__).resolve().parent.parent / "rules"
    if checkout.is_dir():
        return checkout
    return Path(sys.prefix) / "share" / "memory-gate" / "rules"


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


@cache
def _read(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}


def load_rules(name: str, project_root: Path | None = None) -> dict[str, Any]:
    """The merged rule table `name` (e.g. "topic_shift" for rules/topic_shift.toml)."""
    filename = f"{name}.toml"
    layers = [shipped_rules_dir() / filename, user_dirs().config / "rules" / filename]
    if project_root is not None:
        layers.append(project_root / ".gate" / "rules" / filename)
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = _merge(merged, _read(str(layer)))
    if not merged:
        raise FileNotFoundError(f"no rules named {name!r} (looked in {layers[0].parent})")
    return merged
