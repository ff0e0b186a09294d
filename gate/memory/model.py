"""The memory: one fact an agent or a person chose to keep (hot path: stdlib only).

A memory is a plain dataclass that round-trips through a dict, which is both its TOML file and its
JSON-lines export. `validate()` raises ValidationError with a message a user can act on.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from gate.errors import ValidationError
from gate.memory.vocab import KINDS, LINK_TYPES, SCOPES, SOURCES, STATUSES, joined_cues

__all__ = ["KINDS", "LINK_TYPES", "SCOPES", "SOURCES", "STATUSES", "Link", "Memory", "mint_id", "now_iso"]

ID_PATTERN = re.compile(r"^[a-z0-9-]{3,40}$")
TITLE_MAX = 160
# Cue words: how someone would ask about the fact (symptoms, error text, other names); a line or two.
CUES_MAX = 1_000
# A memory is one fact with its why/where/how: ~50k tokens is far beyond any; the hooks analyze each hit's body.
BODY_MAX = 200_000


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def mint_id() -> str:
    """A short random id such as `m-7f3a9c`; callers check uniqueness against the store."""
    import secrets  # write path only

    return f"m-{secrets.token_hex(3)}"


@dataclass
class Link:
    type: str
    target: str

    def to_dict(self) -> dict[str, str]:
        return {"type": self.type, "target": self.target}


@dataclass
class Memory:
    id: str
    kind: str
    title: str
    body: str = ""
    cues: str = ""  # how someone would ask about it; indexed in a field of its own (rules/search.toml boosts it)
    # Cue words gate added, not the writer: the user's words and the errors of the turn the memory was written in
    # (gate/session/turn_cues.py), kept apart so an edit or `gate show` tells them from the writer's; searched as cues.
    derived_cues: str = ""
    tags: list[str] = field(default_factory=list)
    scope: str = "private"
    project: str = ""
    paths: list[str] = field(default_factory=list)
    # anchored file (relative to the project) -> "sha256:<hex>" of its content when the memory was written
    anchors: dict[str, str] = field(default_factory=dict)
    # anchored file -> {"terms": the memory's terms on a few of its lines, "hash": of those lines}: what the memory
    # is about there. An edit elsewhere in the file leaves it fresh (gate/memory/cues/staleness.py).
    anchor_lines: dict[str, dict[str, Any]] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    triggers: list[str] = field(default_factory=list)
    source: str = "agent"
    status: str = "active"
    created: str = field(default_factory=now_iso)
    updated: str = field(default_factory=now_iso)
    session: str = ""
    # Which agent wrote it (gate/hosts/shell.py: claude-code, codex, gemini); "" when no agent's shell did (a
    # person, a script) or it was written before gate recorded it. In the file only when set.
    agent: str = ""

    # --- conversion -------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["links"] = [link.to_dict() for link in self.links]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, fill_defaults: bool = True) -> Memory:
        """Build from a TOML table or a JSON object. Unknown keys are an error (a typo must not be lost)."""
        if not isinstance(data, dict):
            raise ValidationError("a memory must be a table/object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValidationError(f"unknown field(s): {', '.join(unknown)}")
        for required in ("id", "kind", "title"):
            if required not in data and not (required == "id" and fill_defaults):
                raise ValidationError(f"missing field: {required}")
        values = dict(data)
        if "id" not in values:
            values["id"] = mint_id()
        raw_links = values.pop("links", []) or []
        if not isinstance(raw_links, list):
            raise ValidationError("links must be a list of {type, target}")
        links: list[Link] = []
        for raw in raw_links:
            if not isinstance(raw, dict) or set(raw) != {"type", "target"}:
                raise ValidationError(f"a link must be {{type, target}}, got {raw!r}")
            links.append(Link(type=str(raw["type"]), target=str(raw["target"])))
        for list_field in ("tags", "paths", "triggers"):
            if list_field in values and not isinstance(values[list_field], list):
                raise ValidationError(f"{list_field} must be a list")
        if "anchors" in values and not isinstance(values["anchors"], dict):
            raise ValidationError("anchors must be a table of path = hash")
        if "anchor_lines" in values and not isinstance(values["anchor_lines"], dict):
            raise ValidationError("anchor_lines must be a table of path = {terms, hash}")
        memory = cls(**values, links=links)
        memory.validate()
        return memory

    # --- rules ------------------------------------------------------------------------------------------------
    def validate(self) -> None:
        for name in ("id", "kind", "title", "body", "cues", "derived_cues", "scope", "project", "source", "status",
                     "created", "updated", "session", "agent"):
            if not isinstance(getattr(self, name), str):
                raise ValidationError(f"{name} must be text")
        if not ID_PATTERN.match(self.id):
            raise ValidationError(
                f"invalid id {self.id!r}", hint="an id is 3-40 characters of a-z, 0-9 and '-'"
            )
        if self.kind not in KINDS:
            raise ValidationError(f"unknown kind {self.kind!r}", hint=f"kinds: {', '.join(KINDS)}")
        title = self.title.strip()
        if not title:
            raise ValidationError("empty title", hint="the title is one line that carries the fact itself")
        if "\n" in title or "\r" in title:
            raise ValidationError("the title must be one line", hint="put details in --body")
        if len(title) > TITLE_MAX:
            raise ValidationError(
                f"title is {len(title)} characters; at most {TITLE_MAX}",
                hint="keep the fact in the title short and put the details in --body",
            )
        if len(self.body) > BODY_MAX:
            raise ValidationError(
                f"body is {len(self.body)} characters; at most {BODY_MAX}",
                hint="a memory is one fact: keep what matters and point to the file or document for the rest",
            )
        if len(self.cues) + len(self.derived_cues) > CUES_MAX:
            raise ValidationError(
                f"cues are {len(self.cues) + len(self.derived_cues)} characters; at most {CUES_MAX}",
                hint="cues are the few words someone would ask with: symptoms, error text, other names",
            )
        if self.scope not in SCOPES:
            raise ValidationError(f"unknown scope {self.scope!r}", hint=f"scopes: {', '.join(SCOPES)}")
        if self.source not in SOURCES:
            raise ValidationError(f"unknown source {self.source!r}", hint=f"sources: {', '.join(SOURCES)}")
        if self.status not in STATUSES:
            raise ValidationError(f"unknown status {self.status!r}", hint=f"statuses: {', '.join(STATUSES)}")
        for link in self.links:
            if link.type not in LINK_TYPES:
                raise ValidationError(
                    f"unknown link type {link.type!r}", hint=f"link types: {', '.join(LINK_TYPES)}"
                )
            if not ID_PATTERN.match(link.target):
                raise ValidationError(f"invalid link target {link.target!r}")
            if link.target == self.id:
                raise ValidationError("a memory cannot link to itself")
        for name in ("tags", "paths", "triggers"):
            if not all(isinstance(item, str) for item in getattr(self, name)):
                raise ValidationError(f"{name} must be a list of text")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in self.anchors.items()):
            raise ValidationError("anchors must map paths to hashes")
        for path, about in self.anchor_lines.items():
            if not (isinstance(path, str) and isinstance(about, dict) and set(about) == {"terms", "hash"}
                    and isinstance(about["hash"], str) and isinstance(about["terms"], list)
                    and all(isinstance(t, str) for t in about["terms"])):
                raise ValidationError(f"anchor_lines.{path} must be {{terms = [...], hash = \"sha256:...\"}}",
                                      hint="`gate verify ID --refresh` records it again")
        if self.triggers:
            from gate.memory.cues.triggers import parse_all  # stdlib; a trigger that cannot fire is refused at write

            parse_all(self.triggers)

    # --- reading ----------------------------------------------------------------------------------------------
    @property
    def date(self) -> str:
        return self.created[:10]

    def linked(self, link_type: str) -> list[str]:
        return [link.target for link in self.links if link.type == link_type]

    def searchable_text(self) -> str:
        return " ".join([self.title, self.body, self.all_cues, " ".join(self.tags)])

    @property
    def all_cues(self) -> str:
        """The writer's cues and gate's, as the index searches them."""
        return joined_cues(self.cues, self.derived_cues)

