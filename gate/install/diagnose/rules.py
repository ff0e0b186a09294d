"""The shipped rules, the user's and the project's own: present, parseable, and of the right types and ranges.

A user or project layer is checked against the shipped file it overrides: a value of another kind than the
shipped one (`min_z = "high"`) is left out by the hooks (gate/rules.py), so it is a FAIL here, named by file, line
and key, with what it should be. Ranges are those a rule's meaning sets (a share lies in 0..1, a count is a whole
number of at least 0); a key gate does not know is a WARN (a typo has no effect).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from gate.install.diagnose.base import Check
from gate.paths import ProjectPaths, user_dirs

# Numbers that are shares or similarities: 0..1 whatever the shipped value.
_SHARE_KEY = re.compile(r"(share|ratio|similarity|novelty|threshold|decay)$")
# Numbers that may go below 0 (a weight may count against a block).
_SIGNED_KEY = re.compile(r"^score\.weights\.")
# A shipped array holding any of these is one of regular expressions (word lists hold none).
_REGEX_HINT = re.compile(r"[\\()\[\]|?*+^$]")
_LINE_OF_ERROR = re.compile(r"\(at line (\d+), column \d+\)")
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.\- ]+?)\s*=""")


def rules_health(root: Path) -> list[Check]:
    import tomllib

    from gate.rules import shipped_rules_dir

    directory = Path(shipped_rules_dir())
    found = sorted(directory.glob("*.toml")) if directory.is_dir() else []
    if not found:
        return [Check("rules", "fail", f"no rules found in {directory}", "reinstall gate; the rules ship with it")]
    shipped: dict[str, dict[str, Any]] = {}
    checks: list[Check] = []
    for path in found:
        try:
            shipped[path.stem] = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            checks.append(_unreadable(path, error, "reinstall gate (its own rules are broken)"))
    layers = [Path(user_dirs().config, "rules"), Path(ProjectPaths.for_cwd(root).root, ".gate", "rules")]
    for layer in layers:
        for path in sorted(layer.glob("*.toml")) if layer.is_dir() else []:
            checks += check_layer(path, shipped.get(path.stem))
    if not checks:
        return [Check("rules", "ok", f"{len(found)} rule files in {directory}" + _overrides(layers))]
    return checks


def _overrides(layers: list[Path]) -> str:
    own = [str(layer) for layer in layers if layer.is_dir() and any(layer.glob("*.toml"))]
    return f", overridden in {' and '.join(own)}" if own else ""


def _unreadable(path: Path, error: Exception, hint: str) -> Check:
    line = _LINE_OF_ERROR.search(str(error))
    where = f"{path}:{line.group(1)}" if line else str(path)
    return Check("rules", "fail", f"{where}: does not parse: {error}", hint)


def check_layer(path: Path, shipped: dict[str, Any] | None) -> list[Check]:
    """One user or project rules file against the shipped file of its name."""
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
        layer = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return [_unreadable(path, error, "fix the line named (TOML syntax); until then the hooks leave this file out "
                            "and use the rules below it")]
    if shipped is None:
        return [Check("rules", "warn", f"{path}: gate has no rules named {path.stem!r}; this file has no effect",
                      "a rules file overrides the one of its name among gate's own (`gate doctor` names their "
                      "directory when the rules are fine)")]
    problems: list[tuple[str, str, str]] = []  # (key, what is wrong, status)
    _compare(layer, shipped, "", problems)
    lines = text.splitlines()
    checks = []
    for key, problem, status in problems:
        line = _line_of(lines, key)
        where = f"{path}:{line}" if line else str(path)
        hint = (
            "give the key a value of the kind and range named; until then the hooks keep the value below it"
            if status == "fail"
            else "check the spelling against the shipped file of this name; an unknown key has no effect"
        )
        checks.append(Check("rules", status, f"{where}: {key} {problem}", hint))
    return checks


def _compare(layer: dict[str, Any], shipped: dict[str, Any], prefix: str, problems: list[tuple[str, str, str]]) -> None:
    from gate.rules import fits, value_kind

    for key, value in layer.items():
        name = f"{prefix}{key}"
        if key not in shipped:
            problems.append((name, "is not a rule gate knows", "warn"))
            continue
        base = shipped[key]
        if not fits(value, base):
            problems.append((name, f"is {value_kind(value)} ({value!r:.40}); it should be {value_kind(base)}"
                             f" (gate's own: {base!r:.40})", "fail"))
        elif isinstance(value, dict):
            _compare(value, base, f"{name}.", problems)
        elif isinstance(value, list):
            _compare_array(name, value, base, problems)
        elif isinstance(value, str) and key == "regex":
            try:
                re.compile(value)
            except re.error as error:
                problems.append((name, f"is not a regular expression: {error}", "fail"))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            wrong = _out_of_range(name, value, base)
            if wrong:
                problems.append((name, f"is {value!r}; {wrong}", "fail"))


def _compare_array(name: str, value: list[Any], base: list[Any], problems: list[tuple[str, str, str]]) -> None:
    from gate.rules import fits, value_kind

    kinds = {value_kind(item) for item in base}
    if len(kinds) != 1 or not value:
        return  # an empty or mixed shipped array says nothing about its items
    (kind,) = kinds
    for position, item in enumerate(value):
        if not fits(item, base[0]):
            plural = kind.split(" ", 1)[1] + "s"
            problems.append((name, f"item {position + 1} is {value_kind(item)}; the items should be {plural}", "fail"))
            return
    if kind == "a table":  # [[pattern]] and the like: each entry's keys as in gate's own entries
        model: dict[str, Any] = {}
        for entry in base:
            model.update(entry)
        for position, item in enumerate(value):
            _compare(item, model, f"{name}[{position + 1}].", problems)
    if kind == "a string" and any(_REGEX_HINT.search(item) for item in base):
        for item in value:
            try:
                re.compile(item)
            except re.error as error:
                problems.append((name, f"holds {item!r:.40}, which is not a regular expression: {error}", "fail"))


def _out_of_range(name: str, value: float, base: float) -> str:
    if not math.isfinite(value):
        return "it should be a finite number"
    if _SHARE_KEY.search(name) and isinstance(base, float) and 0 <= base <= 1 and not 0 <= value <= 1:
        return f"it is a share and should lie in 0..1 (gate's own: {base})"
    if base >= 0 and value < 0 and not _SIGNED_KEY.search(name):
        return f"it should be at least 0 (gate's own: {base})"
    return ""


def _line_of(lines: list[str], key: str) -> int | None:
    """The line (1-based) that sets a dotted key (`pattern[2].regex`: the second `[[pattern]]` entry's), found by
    reading the table headers as TOML does (enough for the files people write: `[table]` and `[[array]]` headers
    and `key = value` lines, dotted keys included)."""
    parts = key.split(".")
    table: list[str] = []
    entries: dict[str, int] = {}
    first_of_table: int | None = None
    for number, line in enumerate(lines, 1):
        header = _HEADER.match(line)
        if header:
            table = [part.strip().strip("\"'") for part in header.group(1).split(".")]
            if line.lstrip().startswith("[["):
                name = ".".join(table)
                entries[name] = entries.get(name, 0) + 1
                table[-1] += f"[{entries[name]}]"
            if table == parts and first_of_table is None:
                first_of_table = number
            continue
        setting = _KEY.match(line)
        if setting:
            here = table + [part.strip().strip("\"'") for part in setting.group(1).split(".")]
            if here == parts[: len(here)]:
                return number
    return first_of_table
