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
    from gate.memory.model import Memory

_URL_CREDENTIAL = re.compile(
    r"^[a-z][a-z0-9+.\-]*://(?P<user>[^\s/:@]*):(?P<password>[^\s/@]*)@(?P<host>\[[^\]\s]*\]|[^\s/:?#]*)",
    re.IGNORECASE,
)


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
