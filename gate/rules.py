"""Behaviour as data: rules/*.toml shipped with gate, overridden per user and per project (hot path, stdlib).

Lookup order, later wins: the shipped rules directory, `<user config>/rules/`, `<project>/.gate/rules/` (and,
for `gate replay --rules DIR`, DIR).
Tables merge key by key; any other value (lists included) is replaced whole, so a user can restate a list.
A user or project layer that does not parse is left out (the hooks go on with the layers below it), and so is a
value of another type than the one it overrides (`min_z = "high"`); each is named in one line of the error
log, once per change of the files. `gate doctor` names the file, the line and the key (gate/install/diagnose/rules.py).

Parsing TOML costs the hook more than the rest of its work (tomllib's import alone is several ms), so the
merged result is kept as a snapshot in the cache directory (marshal: it reads back in a third of JSON's time),
keyed by every layer's path, size and mtime: editing any layer makes a new key, and the next call parses
again. The snapshot also holds what the rules' regexes require (gate/literals.py), worked out there once
instead of compiled in every hook, in the form LazyPattern takes it.
"""

from __future__ import annotations

import marshal
import os
import sys

from gate.memo import cache  # functools.cache without functools (gate/memo.py)
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


def _merge(
    base: dict[str, Any], over: dict[str, Any], problems: list[str] | None = None, where: str = ""
) -> dict[str, Any]:
    """`over` laid on `base`; a value whose type differs from the one it replaces is kept out and, when
    `problems` is given, described there."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value, problems, f"{where}{key}.")
        elif problems is not None and key in merged and not fits(value, merged[key]):
            problems.append(f"{where}{key} is {value_kind(value)}, not {value_kind(merged[key])}")
        else:
            merged[key] = value
    return merged


def fits(value: object, base: object) -> bool:
    """Whether `value` may stand where `base` stood: the same kind, or a whole number where a number was."""
    return value_kind(value) == value_kind(base) or (value_kind(value), value_kind(base)) == ("a whole number",
                                                                                            "a number")


def value_kind(value: object) -> str:
    """A TOML value's kind as a rule reads it."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "a whole number"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return "a date or time"


# 3: required strings of the regexes as groups (gate/literals.py); 4: non-ASCII strings too; 5: marshal, with the
# prefilters as LazyPattern takes them
SNAPSHOT_FORMAT = 5


class RuleTable(dict):  # type: ignore[type-arg]
    """A merged rule table, plus the required strings of its regexes (pattern -> gate.literals entry) and what
    gate.literals.prefilter made of them (pattern -> prefilter, None: worked out from the literals on use)."""

    literals: dict[str, Any]
    prefilters: dict[str, Any] | None

    def __init__(
        self, rules: dict[str, Any], literals: dict[str, Any] | None = None, prefilters: dict[str, Any] | None = None
    ) -> None:
        super().__init__(rules)
        self.literals = literals or {}
        self.prefilters = prefilters if isinstance(prefilters, dict) else None


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
def _load(name: str, project_root: str | None, overlay: str | None = None, user_config: str = "") -> RuleTable:
    filename = f"{name}.toml"
    layers = [join(shipped_rules_dir(), filename), join(user_config or user_dirs().config, "rules", filename)]
    if project_root is not None:
        layers.append(join(project_root, ".gate", "rules", filename))
    if overlay is not None:
        layers.append(join(overlay, filename))
    key, present = _signature(layers)
    if not present:
        raise FileNotFoundError(f"no rules named {name!r} (looked in {os.path.dirname(layers[0])})")
    snapshot = join(user_dirs().cache, "rules", f"{name}-{key}-v{SNAPSHOT_FORMAT}-m{marshal.version}.marshal")
    try:
        with open(snapshot, "rb") as handle:
            cached = marshal.loads(handle.read())  # (marshal.load reads a file piece by piece: ~5x slower)
        if cached.get("layers") == present:
            return RuleTable(cached["rules"], cached["literals"], cached["prefilters"])
    except (OSError, ValueError, EOFError, AttributeError, KeyError, TypeError):
        pass
    merged: dict[str, Any] = {}
    shipped = layers[0]
    for layer in present:
        if layer == shipped or layer == (join(overlay, filename) if overlay is not None else None):
            merged = _merge(merged, _parse(layer))  # gate's own rules, or the ones `gate replay` was told to use
            continue
        problems: list[str] = []
        try:
            merged = _merge(merged, _parse(layer), problems)
        except (OSError, UnicodeDecodeError, ValueError) as error:  # tomllib.TOMLDecodeError is a ValueError
            problems = [f"left out: {error}"]
        if problems:
            _report_layer(layer, project_root, problems)
    from gate.literal_analysis import literal_table  # only when a rules file changed
    from gate.literals import prefilter

    literals = literal_table(merged)
    prefilters = {source: prefilter(entry) for source, entry in literals.items()}
    try:
        # (a TOML date or time is no value marshal writes: such rules are parsed at each call, as if uncached)
        data = marshal.dumps({"layers": present, "rules": merged, "literals": literals, "prefilters": prefilters})
        directory, filename = os.path.split(snapshot)
        ensure_private_dir(directory)  # a user's rules may name private things (their own secret patterns)
        replace_file(snapshot, data)
        _prune(directory, name, filename)
    except (OSError, ValueError):
        pass  # no cache, no harm: the next call parses again
    return RuleTable(merged, literals, prefilters)


def _report_layer(layer: str, project_root: str | None, problems: list[str]) -> None:
    """One error-log line for a rules layer the hooks could not use whole (written once: the snapshot made
    after it is reused until the file changes)."""
    try:
        from gate.paths import error_log_file
        from gate.session.logfile import append, error_line  # not audit.write_error: its redaction reads rules

        message = f"rules {layer}: {'; '.join(problems)} (`gate doctor` shows where)"[:300]
        append(error_log_file(), error_line("rules", "ValueError", message, project_root, "rules"), 5_000_000)
    except Exception:
        pass  # the log is a courtesy; the rules below are in force either way


STALE_SNAPSHOT_SECONDS = 7 * 86400


def _prune(directory: str, name: str, keep: str) -> None:
    """Remove this table's snapshots older than a week: left by earlier rules files or gate versions. (Another
    project with rules of its own has a snapshot of its own; at worst it parses its TOML once more.)"""
    import time

    cutoff = time.time() - STALE_SNAPSHOT_SECONDS
    for entry in os.scandir(directory):
        if entry.name.startswith(f"{name}-") and entry.name.endswith((".marshal", ".json")) and entry.name != keep:
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
    # the user layer's directory is part of the key: a process whose GATE_HOME changes (tests, replay) must not
    # be handed the table another home's rules made
    return _load(name, os.fspath(project_root) if project_root is not None else None, overlay, user_dirs().config)
