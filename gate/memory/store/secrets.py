"""Refuse credentials at write time. Patterns are data (rules/secrets.toml); the message names the pattern only,
never the matched text, so a refused secret does not end up in a terminal log or the audit either.

Some matches are not secrets, and refusing them taught users to work around the check: a local development
URL (`postgresql://payments:payments@localhost:5433/payments`) and placeholders (`<password>`, `${TOKEN}`,
`***`, `sk-xxxx…`). The rules' [allow] table accepts those when a memory is written; logs are still redacted
by the patterns alone."""

from __future__ import annotations

import re

from gate.errors import SecretError
from gate.memo import cache  # functools.cache without functools (gate/memo.py)
from gate.rules import load_rules

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from gate.memory.model import Memory

_URL_CREDENTIAL = re.compile(
    r"^[a-z][a-z0-9+.\-]*://(?P<user>[^\s/:@]*):(?P<password>[^\s/@]*)@(?P<host>\[[^\]\s]*\]|[^\s/:?#]*)",
    re.IGNORECASE,
)


class _Pattern:
    """One secret pattern; with a [pattern.value] table its named group `value` must also look random, measured
    here (the regex alone cannot tell "the token is Zq8vT3nW9xK2pL5m" from "the token is base64url-encoded")."""

    def __init__(self, name: str, regex: str, value: dict | None = None) -> None:
        self.name = name
        self.regex = re.compile(regex)
        self.value = None if not value else RandomValue(value)
        if self.value is not None and "value" not in self.regex.groupindex:
            raise ValueError(f"secret pattern {name!r} has a [pattern.value] table but no (?P<value>...) group")

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        for match in self.regex.finditer(text):
            if self.value is None or self.value.looks_random(match.group("value")):
                yield match

    def sub(self, replacement: str, text: str) -> str:
        if self.value is None:
            return self.regex.sub(replacement, text)
        check = self.value.looks_random
        return self.regex.sub(lambda m: replacement if check(m.group("value")) else m.group(0), text)


class RandomValue:
    """Whether a value looks random: long enough, its characters spread (Shannon entropy, bits per character),
    and its character classes (lower, upper, digit) changing often between neighbours, as in a generated key
    and not in a word, an identifier or a version ("base64url-encoded", "cl100k_base", "OAuth2")."""

    def __init__(self, table: dict) -> None:
        self.min_length = int(table.get("min_length", 12))
        self.min_entropy = float(table.get("min_entropy", 2.75))
        self.min_switch_ratio = float(table.get("min_switch_ratio", 0.25))
        self.trim = str(table.get("trim", ".:)]}"))

    def looks_random(self, value: str) -> bool:
        value = value.rstrip(self.trim)
        if len(value) < self.min_length:
            return False
        return entropy(value) >= self.min_entropy and switch_ratio(value) >= self.min_switch_ratio


def entropy(value: str) -> float:
    """Shannon entropy of the value's characters, in bits per character."""
    from math import log2

    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    total = len(value)
    return -sum(n / total * log2(n / total) for n in counts.values()) if total else 0.0


def _char_class(char: str) -> int:
    return 0 if char.islower() else 1 if char.isupper() else 2 if char.isdigit() else 3


def switch_ratio(value: str) -> float:
    """Of the neighbouring pairs of letters and digits, the share whose class (lower, upper, digit) changes.
    A capital followed by small letters starts a word (`Secret` in `loadSecretFromVault`): not a change."""
    pairs = switches = 0
    classes = [_char_class(char) for char in value]
    for i in range(len(classes) - 1):
        a, b = classes[i], classes[i + 1]
        if a == 3 or b == 3:
            continue  # punctuation separates; it is not a change of class
        pairs += 1
        word_start = a == 1 and b == 0 and i + 2 < len(classes) and classes[i + 2] == 0
        switches += a != b and not word_start
    return switches / pairs if pairs else 0.0


@cache
def _patterns(project_root: str | None) -> tuple[tuple[str, _Pattern], ...]:
    """The shipped and the user's patterns, plus any a project adds. Rules replace a list whole, so the project
    layer alone could empty it: a repository's checked-in rules may add patterns, never take one away."""
    own = load_rules("secrets", None).get("pattern", [])
    compiled = {(p["name"], p["regex"]): _Pattern(p["name"], p["regex"], p.get("value")) for p in own}
    if project_root is not None:
        for p in load_rules("secrets", project_root).get("pattern", []):
            try:
                key = (str(p["name"]), str(p["regex"]))
                if key not in compiled:
                    compiled[key] = _Pattern(key[0], key[1], p.get("value"))
            except (KeyError, TypeError, ValueError, IndexError, re.error):
                continue  # a broken project pattern adds nothing (and removes nothing)
    return tuple((name, pattern) for (name, _), pattern in compiled.items())


class _Allow:
    """The [allow] table of the shipped and user rules (a project's checked-in rules cannot widen it)."""

    def __init__(self, table: dict) -> None:
        self.local_hosts = {str(h).lower() for h in table.get("local_hosts", [])}
        self.local_password = re.compile(str(table.get("local_password", r"(?!)")))
        self.service_host = re.compile(str(table.get("service_host", r"(?!)")))
        self.placeholders = [re.compile(str(p)) for p in table.get("placeholders", [])]
        self.key_like = re.compile(str(table.get("key_like", r"[A-Za-z0-9+/=_\-]{12,}")))

    def is_placeholder(self, value: str) -> bool:
        return any(p.fullmatch(value) for p in self.placeholders)

    def holds_placeholder_only(self, text: str) -> bool:
        """The text holds a placeholder, and once they are taken out nothing key-like is left."""
        rest = text
        for pattern in self.placeholders:
            rest = pattern.sub(" ", rest)
        return rest != text and not self.key_like.search(rest)

    def local_url(self, user: str, password: str, host: str) -> bool:
        host = host.strip("[]").lower()
        if host in self.local_hosts:
            return password == user or bool(self.local_password.fullmatch(password))
        return bool(self.service_host.fullmatch(host)) and password == user and bool(password)

    def allows(self, matched: str) -> bool:
        url = _URL_CREDENTIAL.match(matched)
        if url is not None:
            password = url["password"]
            return self.is_placeholder(password) or self.local_url(url["user"], password, url["host"])
        return self.holds_placeholder_only(matched)


@cache
def _allow() -> _Allow:
    return _Allow(load_rules("secrets", None).get("allow", {}))


def find_secret(text: str, project_root: str | None = None) -> str | None:
    """The name of the first secret pattern the text matches (leaving out what [allow] accepts), or None."""
    for name, pattern in _patterns(project_root):
        for match in pattern.finditer(text):
            if not _allow().allows(match.group(0)):
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


_PLURAL_FIELDS = frozenset({"cues", "derived_cues", "tags", "paths", "triggers", "links"})


def refuse_secrets(fields: dict[str, str], project_root: str | None = None) -> None:
    for field_name, text in fields.items():
        name = find_secret(text, project_root)
        if name:
            looks = "look like they contain" if field_name in _PLURAL_FIELDS else "looks like it contains"
            raise SecretError(
                f"the {field_name} {looks} a secret ({name}); nothing was written",
                hint="store where the secret lives (e.g. 'the deploy key is in the vault under ci/deploy'), "
                "never the secret itself",
            )


def text_fields(memory: Memory) -> dict[str, str]:
    """Every text of a memory that someone typed, where a pasted credential could hide: all are checked."""
    return {
        "title": memory.title,
        "body": memory.body,
        "cues": memory.cues,
        "derived_cues": memory.derived_cues,
        "tags": " ".join(memory.tags),
        "paths": " ".join(memory.paths),
        "triggers": " ".join(memory.triggers),
    }
