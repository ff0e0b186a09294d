"""Refuse credentials at write time. Patterns are data (rules/secrets.toml); the message names the pattern only,
never the matched text, so a refused secret does not end up in a terminal log or the audit either."""

from __future__ import annotations

import re
from functools import cache

from gate.errors import SecretError
from gate.rules import load_rules


@cache
def _patterns(project_root: str | None) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The shipped and the user's patterns, plus any a project adds. Rules replace a list whole, so the project
    layer alone could empty it: a repository's checked-in rules may add patterns, never take one away."""
    own = load_rules("secrets", None).get("pattern", [])
    compiled = {(p["name"], p["regex"]): re.compile(p["regex"]) for p in own}
    if project_root is not None:
        for p in load_rules("secrets", project_root).get("pattern", []):
            try:
                key = (str(p["name"]), str(p["regex"]))
                compiled.setdefault(key, re.compile(key[1]))
            except (KeyError, TypeError, re.error):
                continue  # a broken project pattern adds nothing (and removes nothing)
    return tuple((name, pattern) for (name, _), pattern in compiled.items())


def find_secret(text: str, project_root: str | None = None) -> str | None:
    """The name of the first secret pattern the text matches, or None."""
    for name, pattern in _patterns(project_root):
        if pattern.search(text):
            return name
    return None


def find_secrets(text: str, project_root: str | None = None) -> list[str]:
    """Every piece of the text that a secret pattern matches."""
    return [match.group(0) for _, pattern in _patterns(project_root) for match in pattern.finditer(text)]


def redact_secrets(text: str, replacement: str = "[redacted]", project_root: str | None = None) -> str:
    """The text with every match of every secret pattern replaced (for logs, which must never hold one)."""
    for _, pattern in _patterns(project_root):
        text = pattern.sub(replacement, text)
    return text


def refuse_secrets(fields: dict[str, str], project_root: str | None = None) -> None:
    for field_name, text in fields.items():
        name = find_secret(text, project_root)
        if name:
            raise SecretError(
                f"the {field_name} looks like it contains a secret ({name}); nothing was written",
                hint="store where the secret lives (e.g. 'the deploy key is in the vault under ci/deploy'), "
                "never the secret itself",
            )
