"""Near-duplicates caught at write (cold path): does a new memory's fact restate a live one?

The fact is the title. Two titles are near-duplicates when their content terms mostly coincide (Dice over
stems, a shorter stem that starts a longer one counts as the same word) and nothing marks them as two facts:

- other numbers (30 vs 45 days; one side numbered, the other not; "worker 1 note 10" vs "worker 1 note 1", counted
  as many times as they occur), unless one side's numbers contain the other's; the same numbers on other words
  ("worker 2 note 1" vs "worker 1 note 2");
- other identifiers (paths, `ROUND_HALF_UP`, `SameSite=Strict`, `/api/cart`, words of letters and digits such as
  `zeta1x10` — which never match another by their first letters: `zeta1x1` is not `zeta1x10`), or other names
  (capitalised words that are not the title's first word), each side having one the other lacks;
- one side negated and not the other ("don't mock" / "mock"); a negation in an aside in brackets ("keep SQL
  portable (no RETURNING)") counts only when the other side says something of the aside ("with RETURNING");
- words of one contrast group on the two sides (enabled / disabled, staging / production, before / after);
- the same sentence frame with one thing swapped for another ("owns the accounts table" / "owns the
  transactions table"), unless the swapped words are listed as synonyms;
- each side holding more than one content word the other lacks (a restatement rewords one or two words).

Thresholds and word lists: rules/duplicates.toml. Measured on tests/data/near_duplicates.py.
"""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher
from typing import Any

from gate.memo import cache  # functools.cache without functools (gate/memo.py)
from gate.memory.index.read import MemoryIndex
from gate.memory.model import Memory
from gate.rules import load_rules
from gate.textproc import stopwords

_WORD = re.compile(r"[^\s,;()\[\]{}\"`]+")
# "X, not Y" contrasts two things; it does not negate the statement
_CONTRASTIVE_NOT = re.compile(r",\s*(?:and\s+)?not\b", re.IGNORECASE)
# an aside in brackets: "keep SQL portable (no RETURNING)"
_ASIDE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_NUMBER = re.compile(r"^[~<>≤≥]?v?\d+(?:[.:,]\d+)*[a-z%]{0,3}$", re.IGNORECASE)
_DIGITS = re.compile(r"\d+(?:[.:]\d+)*")
_IDENTIFIER_CHARS = re.compile(r"[_/=.:*]|[a-z][A-Z]|^[A-Z0-9]{2,}[a-z]|-")
_SPLIT = re.compile(r"[^\W_]+")
_PUNCTUATION = re.compile(r"[\W_]+")
_LETTER_AND_DIGIT = re.compile(r"[^\W\d_].*\d|\d.*[^\W\d_]")


class Comparison:
    """How a new title compares with an existing one."""

    __slots__ = ("distinct", "similarity")

    def __init__(self, similarity: float, distinct: str = "") -> None:
        self.similarity = similarity
        self.distinct = distinct  # why the two are different facts despite the overlap ("" if nothing says so)

    def duplicate(self, threshold: float) -> bool:
        return not self.distinct and self.similarity >= threshold


class Match:
    def __init__(self, record: dict[str, Any], comparison: Comparison) -> None:
        self.record = record
        self.comparison = comparison

    @property
    def id(self) -> str:
        return str(self.record["id"])

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.record["title"], "kind": self.record["kind"],
                "similarity": round(self.comparison.similarity, 3)}


@cache
def _stem(word: str) -> str:
    from gate.textproc import _stemmer

    return _stemmer().stemWord(word)


class _Title:
    """One title taken apart: words in order, content stems, numbers, identifiers, names, negation."""

    def __init__(self, text: str, conf: dict[str, Any]) -> None:
        stop = stopwords()
        text = text.replace("\u2019", "'")
        asides = [(m.start(), m.end()) for m in _ASIDE.finditer(text)]
        raw: list[str] = []
        aside_of: list[int] = []  # which aside each word is in (-1: the statement itself)
        for found in _WORD.finditer(text):
            word = found.group(0).strip(".!?:'")
            if word:
                raw.append(word)
                aside_of.append(next((n for n, (s, e) in enumerate(asides) if s <= found.start() < e), -1))
        self.words: list[str] = []  # lowercase plain words, in order (the sentence frame)
        self.stems: set[str] = set()
        self.numbers: Counter[str] = Counter()  # each as often as it occurs: "worker 1 note 1" holds two
        self.bound: set[tuple[str, str]] = set()  # (stem of a word beside a number, the number)
        self.identifiers: set[str] = set()
        self.names: set[str] = set()
        # A negation in an aside, "(no RETURNING)", qualifies a detail, not the statement: it counts only when the
        # other title says something of that aside (compare(): "(no backoff)" against "with backoff").
        self.asides: list[tuple[int, set[str]]] = [(0, set()) for _ in asides]  # (negations, content stems)
        negations = {w.lower() for w in conf.get("negations", [])}
        self.negated = -len(_CONTRASTIVE_NOT.findall(text))
        for position, token in enumerate(raw):
            lower = token.lower()
            aside = aside_of[position]
            if lower in negations or lower.endswith("n't"):
                if aside < 0:
                    self.negated += 1
                else:
                    self.asides[aside] = (self.asides[aside][0] + 1, self.asides[aside][1])
            if aside >= 0 and lower not in stop and len(lower) > 1 and lower.isalpha():
                self.asides[aside][1].add(_stem(lower))
            if _NUMBER.match(token):
                found = _DIGITS.findall(token)
                self.numbers.update(found)
                for neighbour in raw[max(position - 1, 0):position] + raw[position + 1:position + 2]:
                    word = neighbour.lower()
                    if word.isalpha() and word not in stop:
                        self.bound.update((_stem(word), number) for number in found)
                self.words.append(lower)
                continue
            if (_IDENTIFIER_CHARS.search(token) or _LETTER_AND_DIGIT.search(token)) and _SPLIT.search(token):
                # a path by its last part: the directories are where, not what (and would outweigh the words)
                lower = lower.rstrip("/").rsplit("/", 1)[-1] or lower
                # written another way is the same identifier: utf8 / UTF-8, round_half_up / ROUND-HALF-UP
                self.identifiers.add(_PUNCTUATION.sub("", lower) or lower)
                self.numbers.update(_DIGITS.findall(token) if not re.search(r"[a-z]", lower) else [])
            parts = _SPLIT.findall(lower)
            for part in parts:
                self.words.append(part)
                if part in stop or len(part) < 2:
                    continue
                stem = _stem(part)
                self.stems.add(stem)
                if position > 0 and token[:1].isupper() and not _IDENTIFIER_CHARS.search(token):
                    self.names.add(stem)


def _same(a: str, b: str, prefix_min: int) -> bool:
    if a == b:
        return True
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    # a word with digits is a name or a number: zeta1x1 does not start zeta1x10 as "cache" starts "cached"
    return len(short) >= prefix_min and long.startswith(short) and not any(c.isdigit() for c in long)


def _rebound(a: set[tuple[str, str]], b: set[tuple[str, str]]) -> bool:
    """Whether a word stands beside one number on one side and another number on the other."""
    for word in {w for w, _ in a} & {w for w, _ in b}:
        mine = {n for w, n in a if w == word}
        theirs = {n for w, n in b if w == word}
        if mine - theirs and theirs - mine:
            return True
    return False


def _unmatched(mine: set[str], theirs: set[str], prefix_min: int) -> set[str]:
    return {s for s in mine if not any(_same(s, t, prefix_min) for t in theirs)}


def _groups(conf: dict[str, Any], key: str) -> tuple[frozenset[str], ...]:
    return _stemmed(tuple(tuple(str(w) for w in group) for group in conf.get(key, [])))


@cache
def _stemmed(groups: tuple[tuple[str, ...], ...]) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(_stem(w.lower()) for w in group) for group in groups)


def compare(existing: str, new: str, rules: dict[str, Any] | None = None) -> Comparison:
    """Compare two titles (existing memory first)."""
    conf = (rules if rules is not None else load_rules("duplicates")).get("near_duplicate", {})
    prefix_min = int(conf.get("prefix_min", 4))
    a, b = _Title(existing, conf), _Title(new, conf)
    only_a = _unmatched(a.stems, b.stems, prefix_min)
    only_b = _unmatched(b.stems, a.stems, prefix_min)
    shared = len(a.stems) - len(only_a) + len(b.stems) - len(only_b)
    total = len(a.stems) + len(b.stems)
    similarity = shared / total if total else 0.0
    most = int(conf.get("most_unmatched", 1))
    if len(only_a) > most and len(only_b) > most:
        return Comparison(similarity, "each says things the other does not")
    if a.numbers != b.numbers and not (a.numbers and b.numbers and (a.numbers < b.numbers or b.numbers < a.numbers)):
        return Comparison(similarity, "other numbers")
    if a.numbers == b.numbers and _rebound(a.bound, b.bound):
        return Comparison(similarity, "other numbers")
    ids_a = a.identifiers - b.identifiers
    ids_b = b.identifiers - a.identifiers
    if ids_a and ids_b:
        return Comparison(similarity, "other identifiers")
    if (a.names & only_a) and (b.names & only_b):
        return Comparison(similarity, "other names")
    if bool(_negated(a, b, prefix_min) % 2) != bool(_negated(b, a, prefix_min) % 2):
        return Comparison(similarity, "one is negated")
    words_a = {_stem(w) for w in a.words}
    words_b = {_stem(w) for w in b.words}
    for group in _groups(conf, "contrasts"):
        if (words_a & group) - words_b and (words_b & group) - words_a:
            return Comparison(similarity, "contrasting words")
    swapped = _swap(a, b, conf, prefix_min)
    if swapped:
        return Comparison(similarity, swapped)
    return Comparison(similarity)


def _negated(title: _Title, other: _Title, prefix_min: int) -> int:
    """The title's negations: the statement's, and an aside's when the other title says something of it."""
    return title.negated + sum(
        count for count, stems in title.asides if count and len(_unmatched(stems, other.stems, prefix_min)) < len(stems)
    )


def _swap(a: _Title, b: _Title, conf: dict[str, Any], prefix_min: int) -> str:
    """The same sentence frame with content words swapped: a different thing in the same statement."""
    matcher = SequenceMatcher(a=a.words, b=b.words, autojunk=False)
    kept = sum(block.size for block in matcher.get_matching_blocks())
    share = float(conf.get("frame_share", 0.75))
    if not a.words or not b.words or kept / len(a.words) < share or kept / len(b.words) < share:
        return ""
    stop = stopwords()
    synonyms = _groups(conf, "synonyms")
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        left = {_stem(w) for w in a.words[i1:i2] if w not in stop and len(w) > 1}
        right = {_stem(w) for w in b.words[j1:j2] if w not in stop and len(w) > 1}
        left = _unmatched(left, b.stems, prefix_min)
        right = _unmatched(right, a.stems, prefix_min)
        if not left or not right:
            continue
        if any(left <= group and right <= group for group in synonyms):
            continue
        return "one thing swapped for another"
    return ""


def find(index: MemoryIndex, memory: Memory, rules: dict[str, Any] | None = None) -> list[Match]:
    """Live memories of this project whose title the new memory's title restates (best first). Memories the
    new one links to (supersedes, relates, …) are left out: the writer has already said how they relate."""
    from gate.memory.search import field_boosts, query_terms

    rules = rules if rules is not None else load_rules("duplicates", index.paths.root)
    conf = rules.get("near_duplicate", {})
    if not index.exists():
        return []
    linked = {link.target for link in memory.links}
    boosts = field_boosts(load_rules("search", index.paths.root))
    # the index's ranking only gathers candidates (no cliff: a restatement may rank below another memory)
    candidates = index.search(query_terms(memory.title), boosts, int(conf.get("candidates", 20)))
    threshold = float(conf.get("min_similarity", 0.7))
    found = []
    for _, record in candidates:
        if record["id"] in linked or record["id"] == memory.id or record["status"] != "active":
            continue
        if record.get("scope") == "private" and not index.paths.owns(record.get("project") or ""):
            continue  # another project's private memory (shared user-scope ones do count)
        comparison = compare(record["title"], memory.title, rules)
        if comparison.duplicate(threshold):
            found.append(Match(record, comparison))
    found.sort(key=lambda m: -m.comparison.similarity)
    return found
