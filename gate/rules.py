"""Behaviour as data: rules/*.toml shipped with gate, overridden per user and per project (hot path, stdlib).

Lookup order, later wins: the shipped rules directory, `<user config>/rules/`, `<project>/.gate/rules/` (and,
for `gate replay --rules DIR`, DIR).
Tables merge key by key; any other value (lists included) is replaced whole, so a user can restate a list.

Parsing TOML costs the hook more than the rest of its work (tomllib's import alone is several ms), so the
merged result is kept as a JSON snapshot in the cache directory, keyed by every layer's path, size and
mtime: editing any layer makes a new key, and the next call parses again. The snapshot also holds what the
rules' regexes require (gate/literals.py), worked out there once instead of compiled in every hook.
"""

from __future__ import annotations

import json
import os
import sys
from functools import cache

from gate.paths import ensure_private_dir, replace_file, user_dirs

join = os.path.join

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any


def shipped_rules_dir() -> str:
    """The rules that ship with gate: the checkout's rules/ (editable install, plugin) or the wheel's data."""
    override = os.environ.get("GATE_RULES_DIR", "").strip()
    return override or _installed_rules_dir()


@cache
def _installed_rules_dir() -> str:
    """(Once per process: realpath() walks every component of the path.)

    A wheel puts the rules in its data scheme, `<prefix>/share/memory-gate/rules`, and gate in
    `<prefix>/lib/pythonX.Y/site-packages/gate` (`<prefix>/Lib/site-packages` on Windows, `dist-packages` on
    Debian): the prefix is found from gate's own location, not from sys.prefix, which under the hooks'
    `-I -S` (no `site`) is the base interpreter's, not the venv's."""
    package = os.path.dirname(os.path.realpath(__file__))
    checkout = join(os.path.dirname(package), "rules")
    if os.path.isdir(checkout):
        return checkout
    directory = package
    for _ in range(4):
        directory = os.path.dirname(directory)
        candidate = join(directory, "share", "memory-gate", "rules")
        if os.path.isdir(candidate):
            return candidate
    return join(sys.prefix, "share", "memory-gate", "rules")


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


SNAPSHOT_FORMAT = 4  # 3: required strings of the regexes as groups (gate/literals.py); 4: non-ASCII strings too


class RuleTable(dict):  # type: ignore[type-arg]
    """A merged rule table, plus the required strings of its regexes (pattern -> gate.literals entry)."""

    literals: dict[str, Any]

    def __init__(self, rules: dict[str, Any], literals: dict[str, Any] | None = None) -> None:
        super().__init__(rules)
        self.literals = literals or {}


def _parse(path: str) -> dict[str, Any]:
    import tomllib

    with open(path, "rb") as handle:
        return tomllib.load(handle)


def _signature(layers: list[str]) -> tuple[str, list[str]]:
    parts = []
    present = []
    for layer in layers:
        try:
            stat = os.stat(layer)
        except OSError:
            continue
        parts.append(f"{layer}:{stat.st_size}:{stat.st_mtime_ns}")
        present.append(str(layer))
    import zlib

    key = "|".join(parts)
    return f"{zlib.crc32(key.encode('utf-8', 'surrogateescape')):08x}-{len(key)}", present


@cache
def _load(name: str, project_root: str | None, overlay: str | None = None) -> RuleTable:
    filename = f"{name}.toml"
    layers = [join(shipped_rules_dir(), filename), join(user_dirs().config, "rules", filename)]
    if project_root is not None:
        layers.append(join(project_root, ".gate", "rules", filename))
    if overlay is not None:
        layers.append(join(overlay, filename))
    key, present = _signature(layers)
    if not present:
        raise FileNotFoundError(f"no rules named {name!r} (looked in {os.path.dirname(layers[0])})")
    snapshot = join(user_dirs().cache, "rules", f"{name}-{key}-v{SNAPSHOT_FORMAT}.json")
    try:
        with open(snapshot, encoding="utf-8") as handle:
            cached = json.load(handle)
        if cached.get("layers") == present:
            return RuleTable(cached["rules"], cached["literals"])
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        pass
    merged: dict[str, Any] = {}
    for layer in present:
        merged = _merge(merged, _parse(layer))
    from gate.literal_analysis import literal_table  # only when a rules file changed

    literals = literal_table(merged)
    try:
        directory, filename = os.path.split(snapshot)
        ensure_private_dir(directory)  # a user's rules may name private things (their own secret patterns)
        replace_file(snapshot, json.dumps({"layers": present, "rules": merged, "literals": literals}))
        _prune(directory, name, filename)
    except OSError:
        pass  # no cache, no harm: the next call parses again
    return RuleTable(merged, literals)


STALE_SNAPSHOT_SECONDS = 7 * 86400


def _prune(directory: str, name: str, keep: str) -> None:
    """Remove this table's snapshots older than a week: left by earlier rules files or gate versions. (Another
    project with rules of its own has a snapshot of its own; at worst it parses its TOML once more.)"""
    import time

    cutoff = time.time() - STALE_SNAPSHOT_SECONDS
    for entry in os.scandir(directory):
        if entry.name.startswith(f"{name}-") and entry.name.endswith(".json") and entry.name != keep:
            try:
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue


def load_rules(
    name: str, project_root: str | os.PathLike[str] | None = None, overlay: str | None = None
) -> RuleTable:
    """The merged rule table `name` (e.g. "topic_shift" for rules/topic_shift.toml); `overlay` is one more
    rules directory laid over the others (`gate replay --rules DIR`)."""
    return _load(name, os.fspath(project_root) if project_root is not None else None, overlay)
