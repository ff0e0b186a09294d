"""The words a project's prompts use (hot path: standard library only): how many of its prompts used each term.

A term that most of a project's prompts use ("view", "list", the product's name) carries no topic there, however
rare it is in the store: the recall gate weighs a prompt's terms down by it (rules/recall.toml [prompt_terms]).
Gate keeps the table as it goes, one small JSON file per project under the state directory:

    {"version": 1, "prompts": N, "terms": {term: prompts that used it}, "repeats": {fingerprint: times seen}}

Each prompt with content adds its distinct terms once. The table stays small: past MAX_TERMS terms, those used by
a single prompt are dropped (a word said once is never one that most prompts use). Two sessions writing at once
may lose one prompt's count: a frequency does not need every prompt. Until the table has counted enough prompts,
a new project's words are weighed by the store (the terms most memories share, from the cue table).

A long prompt the project has sent word for word several times before is a program's (an observer loop, a
scheduled job), not a request: `repeats` counts each prompt's fingerprint (the last MAX_REPEATS kept).
"""

from __future__ import annotations

import math
import os

from gate import fastjson as json  # json.loads and json.dumps without the json package (gate/fastjson.py)
from gate.paths import ProjectPaths, ensure_private_dir, replace_file

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

VERSION = 1
MAX_TERMS = 4000
MAX_REPEATS = 500


def fingerprint(prompt: str) -> str:
    import zlib

    flat = " ".join(prompt.split()).lower()
    return f"{zlib.crc32(flat.encode('utf-8', 'surrogateescape')):08x}{len(flat):x}"


def table_file(paths: ProjectPaths) -> str:
    return os.path.join(paths.dirs.state, "prompt-terms", f"{paths.key}.json")


class PromptTerms:
    """One project's table of prompt terms, read once per hook run."""

    __slots__ = ("path", "prompts", "repeats", "terms")

    def __init__(
        self, path: str, prompts: int = 0, terms: dict[str, int] | None = None, repeats: dict[str, int] | None = None
    ) -> None:
        self.path = path
        self.prompts = prompts
        self.terms: dict[str, int] = terms or {}
        self.repeats: dict[str, int] = repeats or {}

    @classmethod
    def load(cls, paths: ProjectPaths) -> PromptTerms:
        path = table_file(paths)
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return cls(path)
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return cls(path)
        prompts, terms, repeats = data.get("prompts"), data.get("terms"), data.get("repeats", {})
        if not isinstance(prompts, int) or not isinstance(terms, dict) or not isinstance(repeats, dict):
            return cls(path)
        return cls(path, prompts, {t: n for t, n in terms.items() if isinstance(n, int)},
                   {f: n for f, n in repeats.items() if isinstance(n, int)})

    def seen(self, prompt: str) -> int:
        """How many times before the project sent this prompt, word for word."""
        return self.repeats.get(fingerprint(prompt), 0)

    def share(self, term: str) -> float:
        return self.terms.get(term, 0) / self.prompts if self.prompts else 0.0

    def add(self, prompt_terms: Iterable[str], prompt: str = "") -> None:
        """Count one prompt's terms (each once) and its fingerprint, and write the table back."""
        distinct = set(prompt_terms)
        if not distinct:
            return
        self.prompts += 1
        for term in distinct:
            self.terms[term] = self.terms.get(term, 0) + 1
        if len(self.terms) > MAX_TERMS:
            self.terms = {t: n for t, n in self.terms.items() if n > 1}
        if prompt:
            key = fingerprint(prompt)
            self.repeats[key] = self.repeats.pop(key, 0) + 1  # last seen last: the oldest go first
            if len(self.repeats) > MAX_REPEATS:
                self.repeats = dict(list(self.repeats.items())[-MAX_REPEATS:])
        ensure_private_dir(os.path.dirname(self.path))
        data = {"version": VERSION, "prompts": self.prompts, "terms": self.terms, "repeats": self.repeats}
        replace_file(self.path, json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def damping(share: float, rules: Mapping[str, Any]) -> float:
    """The weight factor of a term used by `share` of the project's prompts: 1 up to `common_share`, then falling
    with the log of the share (a term in twice that share weighs log(1/2s)/log(1/s) of its weight), never below
    `least_weight`."""
    start = float(rules.get("common_share", 0.2))
    least = float(rules.get("least_weight", 0.2))
    if share <= start or not 0 < start < 1:
        return 1.0
    return max(least, math.log(1 / share) / math.log(1 / start))


def weights(
    terms: Iterable[str], table: PromptTerms, common: Iterable[str], rules: Mapping[str, Any]
) -> dict[str, float]:
    """term -> factor (< 1 only) for the terms that say little in this project: by the prompts' table once it
    has counted `min_prompts` prompts, else the store's most shared terms (`common`) at `store_weight`."""
    out: dict[str, float] = {}
    if table.prompts >= int(rules.get("min_prompts", 30)):
        for term in terms:
            factor = damping(table.share(term), rules)
            if factor < 1:
                out[term] = factor
        return out
    store_weight = float(rules.get("store_weight", 1.0))
    if store_weight < 1:
        shared = set(common)
        out.update((term, store_weight) for term in terms if term in shared)
    return out
