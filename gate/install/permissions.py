"""The permission rules gate adds to a settings file: its own commands, which its messages tell the agent to
run, pass without an approval prompt — exactly those, spelled as the messages spell them, and nothing broader.

Claude Code matches a `Bash(PREFIX *)` rule against the command as written (measured on 2.1.332): `gate search
x` and `gate search "a b"` pass `Bash(gate search *)`, `gate searchx` does not. A command chained with `&&`,
`;`, `||`, `|` or `&`, or one that holds `$(…)`, backticks or an output redirection, passes only if every part
of it is allowed on its own, so `gate search x && rm -rf ~` still asks. Quoting is part of the text: a path
with a space is allowed as `'/path with space/gate'`, the way gate's messages quote it.

Gate's messages (gate/render.py gate_command) name the command `gate` when that resolves on PATH to this
installation, else the console script beside the hook's interpreter by absolute path. Project settings are
usually committed, so there gate writes the `gate` spelling only; local and user settings never leave the
machine and get the absolute spelling too.

A rule is recognised as gate's by its shape (a `gate` or `…/gate` prefix, one of SUBCOMMANDS, ` *`): that is how
uninstall finds exactly them, and an older install's rules (another venv) are replaced, not kept beside.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Any

from gate.install import jsonedit

# The subcommands gate's messages tell the agent to run (rules/messages.toml): `show ID` and `search WORDS`
# (recall, session start, anchors), `remember …` (the MEMORY CHECK), `verify ID` (a stale anchored memory), `done ID`
# (an open task at session start that is finished: reversible with --reopen).
SUBCOMMANDS: tuple[str, ...] = ("search", "show", "remember", "verify", "done")
PORTABLE = "gate"

_RULE_RE = re.compile(
    r"^Bash\((?P<prefix>gate|/[^\s'\"()]*/gate|'/[^']*/gate') (?P<sub>" + "|".join(SUBCOMMANDS) + r") \*\)$"
)


class PermissionsShapeError(ValueError):
    """`permissions` or `permissions.allow` is not shaped the way Claude Code reads it."""


def rule(prefix: str, subcommand: str) -> str:
    return f"Bash({prefix} {subcommand} *)"


def console_script(python: str) -> str | None:
    """The `gate` script beside an interpreter, shell-quoted as gate's messages quote it; None when absent."""
    script = os.path.join(os.path.dirname(python), "gate")
    return shlex.quote(script) if os.path.isfile(script) else None


def prefixes(scope: str, python: str) -> list[str]:
    """How gate's messages may spell the command, as far as this scope may name it."""
    spelled = [PORTABLE]
    script = console_script(python)
    if scope != "project" and script is not None:
        spelled.append(script)
    return spelled


def desired_rules(scope: str, python: str) -> list[str]:
    return [rule(prefix, sub) for prefix in prefixes(scope, python) for sub in SUBCOMMANDS]


def is_gate_rule(value: Any) -> bool:
    return isinstance(value, str) and _RULE_RE.match(value) is not None


def allow_list(data: Any) -> list[Any]:
    """`permissions.allow` of a settings document, or [] when it has none (or it is not a list)."""
    permissions = data.get("permissions") if isinstance(data, dict) else None
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    return allow if isinstance(allow, list) else []


def gate_rules(data: Any) -> list[str]:
    return [item for item in allow_list(data) if is_gate_rule(item)]


def _check_shape(data: Any) -> None:
    if not isinstance(data, dict):
        raise PermissionsShapeError("the top level is not a JSON object")
    permissions = data.get("permissions")
    if permissions is None:
        return
    if not isinstance(permissions, dict):
        raise PermissionsShapeError('"permissions" is not an object')
    allow = permissions.get("allow")
    if allow is not None and not isinstance(allow, list):
        raise PermissionsShapeError('"permissions.allow" is not a list')


def _remove_one(text: str, keep: set[str]) -> str | None:
    """The text without the last gate rule not in `keep` (and any container it alone filled); None if none."""
    root = jsonedit.parse(text)
    permissions = root.member("permissions")
    allow = permissions.member("allow") if permissions is not None and permissions.kind == "object" else None
    if permissions is None or allow is None or allow.kind != "array":
        return None
    # Last first: removing the newest addition first undoes appends in reverse, which keeps the round trip exact.
    index = next(
        (
            i
            for i in range(len(allow.children) - 1, -1, -1)
            if is_gate_rule(allow.children[i].value) and allow.children[i].value not in keep
        ),
        None,
    )
    if index is None:
        return None
    if len(allow.children) > 1:
        return jsonedit.remove_child(text, allow, index)
    if len(permissions.children) > 1:
        return jsonedit.remove_child(text, permissions, permissions.member_index("allow"))
    return jsonedit.remove_child(text, root, root.member_index("permissions"))


def unmerge(text: str, keep: frozenset[str] = frozenset()) -> str:
    """`text` (without a byte order mark) with every gate rule removed but those in `keep`; other bytes kept."""
    while (smaller := _remove_one(text, set(keep))) is not None:
        text = smaller
    return text


def merge(text: str | None, rules: list[str]) -> str:
    """`text` (a JSON object, no byte order mark) with exactly `rules` as gate's allow rules: other gate rules
    removed, missing ones appended after the user's own."""
    if text is None or not text.strip():
        return jsonedit.render({"permissions": {"allow": list(dict.fromkeys(rules))}}, "", "  ", True) + "\n"
    data = jsonedit.loads_strict(text)
    _check_shape(data)
    text = unmerge(text, keep=frozenset(rules))
    present = set(allow_list(jsonedit.loads_strict(text)))
    missing = [item for item in dict.fromkeys(rules) if item not in present]
    for item in missing:
        root = jsonedit.parse(text)
        unit = jsonedit.detect_indent_unit(text, root)
        permissions = root.member("permissions")
        if permissions is None:
            text = jsonedit.append_child(text, root, {"allow": [item]}, unit, key="permissions")
            continue
        allow = permissions.member("allow")
        if allow is None:
            text = jsonedit.append_child(text, permissions, [item], unit, key="allow")
        else:
            text = jsonedit.append_child(text, allow, item, unit)
    return text
