"""Recall gate: does this prompt shift the session's topic? (hot path, standard library + tantivy)

Deterministic and lexical. A prompt's content terms (gate.textproc: stemmed, stopwords out, identifiers
split) are compared with a decayed record of the recent prompts' terms plus the path parts of the files the
last turn touched. When enough of the prompt's weight is new, it is a shift and its strongest terms become
the memory search. Every threshold and word list is data in rules/topic_shift.toml.
"""

from __future__ import annotations

import math
import re
from functools import cache

from gate.textproc import CAMEL, expand_identifiers, terms

TYPE_CHECKING = False  # typing and dataclasses cost the hook milliseconds to import; annotations are strings
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    Rules = Mapping[str, Any]

# Words as the user wrote them, to map a stem back to a readable surface form.
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['’][a-z]+)?")
# The regexes below compile on first use, and only when a cheap check says they could match: compiling one
# costs a hook process 50-300 µs, and most prompts need none of them.
_SLASH_COMMAND = r"^/[A-Za-z][\w:.-]*(?:\s|$)"
_NUMBERS = r"^[\s\d.,;:#()\-+/&]*(?:and|or)?[\s\d.,;:#()\-+/&]*$"
_NUMBERS_ASCII = " \t\n\r\f\v\x1c\x1d\x1e\x1f0123456789.,;:#()-+/&"  # _NUMBERS' classes, ASCII part
_NOT_WORD = r"[^\w\s'/’]"
# ASCII characters that _NOT_WORD matches (neither \w, whitespace, quote nor slash) -> space
_ASCII_NOT_WORD = {
    code: " " for code in range(128)
    if not (chr(code).isalnum() or chr(code).isspace() or chr(code) in "_'/")
}
_PATH_SPLIT = re.compile(r"[\\/]+")
_PATH_PART = re.compile(r"[._\-\s]+")


class TopicRecord:
    """Recent prompts' terms with weights that decay per prompt; JSON-able for the session ledger."""

    __slots__ = ("prompts", "weights")

    def __init__(self, weights: dict[str, float] | None = None, prompts: int = 0) -> None:
        self.weights: dict[str, float] = dict(weights or {})
        self.prompts = prompts

    def __repr__(self) -> str:
        return f"TopicRecord(prompts={self.prompts}, terms={len(self.weights)})"

    def to_dict(self) -> dict[str, Any]:
        weights = {term: round(weight, 4) for term, weight in self.weights.items()}
        return {"weights": weights, "prompts": self.prompts}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> TopicRecord:
        """Tolerates anything: a ledger from another version must not break the gate."""
        if not isinstance(data, dict):
            return cls()
        raw = data.get("weights")
        weights: dict[str, float] = {}
        if isinstance(raw, dict):
            for term, weight in raw.items():
                if isinstance(term, str) and isinstance(weight, int | float) and math.isfinite(weight):
                    weights[term] = float(weight)
        prompts = data.get("prompts")
        return cls(weights=weights, prompts=prompts if isinstance(prompts, int) else 0)

    def __bool__(self) -> bool:
        return bool(self.weights)


class ShiftVerdict:
    __slots__ = ("novelty", "reason", "shift", "stems", "terms")

    def __init__(
        self, shift: bool, reason: str, terms: list[str], novelty: float, stems: list[str] | None = None
    ) -> None:
        self.shift = shift
        self.reason = reason  # "first_prompt" | "topic_shift" | "no_shift" | "trivial"
        self.terms = terms  # 3-6 strongest content terms as readable words/phrases, for the search and message
        self.novelty = novelty
        self.stems = list(stems or [])  # the stems behind `terms`, for a query on the index

    def __repr__(self) -> str:
        return (
            f"ShiftVerdict(shift={self.shift}, reason={self.reason!r}, terms={self.terms!r}, "
            f"novelty={self.novelty}, stems={self.stems!r})"
        )


# ---------------------------------------------------------------------------------------------------------
# rules


def _section(rules: Rules, name: str) -> Mapping[str, Any]:
    value = rules.get(name, {})
    return value if isinstance(value, dict) else {}


def _num(rules: Rules, section: str, key: str, default: float) -> float:
    value = _section(rules, section).get(key, default)
    return float(value) if isinstance(value, int | float) else default


@cache
def _stem_set(words: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    out.update(terms(" ".join(words)))  # one pass: the same stems as word by word
    return frozenset(out)


def _weak(rules: Rules) -> frozenset[str]:
    return _stem_set(tuple(str(w) for w in _section(rules, "terms").get("weak", [])))


def _noise(rules: Rules) -> frozenset[str]:
    return _stem_set(tuple(str(w) for w in _section(rules, "terms").get("noise", [])))


@cache
def _stem_word(word: str) -> tuple[str, ...]:
    """terms() of one word: its stem, or nothing for a stopword (cached: prompts repeat their words)."""
    return tuple(terms(word))


# ---------------------------------------------------------------------------------------------------------
# trivial prompts


def _normalise(prompt: str) -> str:
    """Lowercase, punctuation (but ' and /) to spaces, whitespace runs to one space."""
    lowered = prompt.lower()
    spaced = lowered.translate(_ASCII_NOT_WORD) if lowered.isascii() else re.sub(_NOT_WORD, " ", lowered)
    return " ".join(spaced.split())


def _only_numbers(text: str) -> bool:
    """_NUMBERS.match(text), answered without the regex when the text is ASCII."""
    rest = text.strip(_NUMBERS_ASCII)
    if rest in ("", "and", "or"):
        return True
    return not rest.isascii() and re.match(_NUMBERS, text) is not None


def is_trivial(prompt: str, rules: Rules) -> bool:
    """An acknowledgement, a choice by number, or a slash command: no topic of its own."""
    return trivial_kind(prompt, rules) is not None


def trivial_kind(prompt: str, rules: Rules) -> str | None:
    """Why a prompt has no topic of its own: "command" (a slash command, or written by a program: nothing to
    answer from memory) or "answer" (an acknowledgement, a choice by number: it answers the reply before it,
    whose subject is the session's); None for a prompt with content."""
    text = (prompt or "").strip()
    if not text or (text.startswith("/") and re.match(_SLASH_COMMAND, text)):
        return "command"
    if text.startswith("<") and text.startswith(tuple(_section(rules, "trivial").get("prefixes", []))):
        return "command"  # written by a program (a task notification), not by the user
    if _only_numbers(text):
        return "answer"
    section = _section(rules, "trivial")
    normal = _normalise(text)
    if len(normal.replace(" ", "")) <= int(section.get("max_chars", 2)):
        return "answer"
    phrases = {_normalise(str(p)) for p in section.get("phrases", [])}
    if normal in phrases:
        return "answer"
    words = normal.split()
    vocabulary = {str(w).lower() for w in section.get("words", [])}
    if len(words) <= int(section.get("max_words", 8)) and all(w in vocabulary or w.isdigit() for w in words):
        return "answer"
    return None


# ---------------------------------------------------------------------------------------------------------
# terms of a prompt and of paths


def _is_identifier(word: str) -> bool:
    """A word textproc splits (camelCase): decided by textproc itself so both agree."""
    return expand_identifiers(word) != word


# A file path written in a prompt (POSIX or Windows, two separators or more): only its last few components
# name the subject; the rest (drive, home, the project's own folders) is the same in every prompt.
_PROMPT_PATH = r"(?:[A-Za-z]:)?(?:[\\/][^\s\\/:*?\"<>|]+){2,}[\\/]?"


def _last_components(match: re.Match[str], keep: int) -> str:
    parts = [p for p in _PATH_SPLIT.split(match.group(0)) if p]
    return " " + " ".join(parts[-keep:]) + " "


def without_long_paths(text: str, keep: int = 3) -> str:
    """The text with each file path cut to its last `keep` components."""
    if "/" not in text and "\\" not in text:
        return text
    return re.sub(_PROMPT_PATH, lambda m: _last_components(m, keep), text)


def _prompt_terms(prompt: str, rules: Rules, noise: frozenset[str] = frozenset()) -> list[str]:
    """The prompt's terms; a split identifier counts through its parts only ("reserveAccount" is
    "reserve" + "account"), so it neither weighs triple nor looks new when its words are known. Paths are cut
    to their last components; `noise` (the project's own folder names, words every memory shares) and the
    rules' noise words are left out: they stand in every prompt and say nothing about its subject."""
    text = _cut_prompt(prompt, rules)
    return _content_of(text, terms(text), rules, noise)


def _cut_prompt(prompt: str, rules: Rules) -> str:
    """The prompt as its terms are read: at most max_prompt_chars, pasted paths cut to their last components."""
    limit = int(_num(rules, "shift", "max_prompt_chars", 6000))
    return without_long_paths(prompt[:limit], int(_num(rules, "files", "components", 3)))


def _content_of(text: str, all_terms: list[str], rules: Rules, noise: frozenset[str]) -> list[str]:
    wholes = {stem for word in _WORD.findall(text) if _is_identifier(word) for stem in _stem_word(word.lower())}
    dropped = _noise(rules) | noise
    return [t for t in all_terms if t not in wholes and t not in dropped]


def query_terms(
    prompt: str | PromptText, rules: Rules, noise: frozenset[str] = frozenset(), limit: int = 32
) -> list[str]:
    """What the recall gate searches memory for: the prompt's distinct terms, paths cut short, the project's
    noise and the rules' weak words left out (they match every memory and crowd out the ones that matter)."""
    weak = _weak(rules)
    seen: dict[str, None] = {}
    for term in _content(prompt, rules, noise):
        if term not in weak:
            seen.setdefault(term, None)
    return list(seen)[:limit]


class PromptText:
    """One prompt, analysed once per hook run: the shift check, the record update, the pair filter and the
    search read its terms from here; the prompt is tokenized once, whichever of them run."""

    __slots__ = ("_raw", "_terms", "content", "noise", "text", "trivial")

    def __init__(self, text: str, rules: Rules, noise: frozenset[str] = frozenset()) -> None:
        self.text = text
        self.noise = noise
        self.trivial = trivial_kind(text, rules)  # None, "answer" or "command"
        self._raw: list[str] | None = None
        self._terms: list[str] = []
        # content terms with repeats, in order: paths cut short, identifiers through their parts, noise out
        self.content: list[str] = []
        if self.trivial != "command":
            cut = _cut_prompt(text, rules)
            self._terms = terms(cut)
            self.content = _content_of(cut, self._terms, rules, noise)

    def raw_query(self, rules: Rules, limit: int = 32) -> list[str]:
        """The prompt's distinct terms, only the rules' noise words (file extensions) and weak words out: the
        project's words and the words most memories share are kept (cleaning them measured worse)."""
        if self._raw is None:
            dropped = _noise(rules) | _weak(rules)
            self._raw = list(dict.fromkeys(t for t in self._terms if t not in dropped))
        return self._raw[:limit]


def _content(prompt: str | PromptText, rules: Rules, noise: frozenset[str]) -> list[str]:
    return prompt.content if isinstance(prompt, PromptText) else _prompt_terms(prompt, rules, noise)


@cache
def project_words(root: str) -> frozenset[str]:
    """Terms of the project's own path (home directory included): in every path a prompt pastes, never a
    subject ("C:\\Users\\me\\work\\shop\\addons\\sale" is about "sale")."""
    words: set[str] = set()
    for part in _PATH_SPLIT.split(root):
        words.update(terms(_PATH_PART.sub(" ", part)))
    return frozenset(words)


def path_terms(paths: Iterable[str], rules: Rules) -> set[str]:
    """Topic terms of file paths: the last few components, extensions and generic parts dropped."""
    section = _section(rules, "files")
    keep = int(section.get("components", 3))
    ignore = {str(w).lower() for w in section.get("ignore", [])}
    out: set[str] = set()
    for path in paths:
        parts = [p for p in _PATH_SPLIT.split(str(path)) if p][-keep:]
        for part in parts:
            stem = part.rsplit(".", 1)[0] if "." in part[1:] else part
            for piece in _PATH_PART.split(stem):
                if piece and piece.lower() not in ignore:
                    out.update(t for t in terms(piece) if t not in ignore)
    return out


def _surface_map(prompt: str, rules: Rules) -> tuple[dict[str, str], list[str | None]]:
    """stem -> the first word the prompt used for it, and the prompt's word sequence as stems.

    The sequence keeps None for words that are not content (stopwords), so adjacency means adjacency in
    the prompt ("reserve account" is a phrase; "reserve the account" is not).
    """
    limit = int(_num(rules, "shift", "max_prompt_chars", 6000))
    surface: dict[str, str] = {}
    sequence: list[str | None] = []
    for match in _WORD.finditer(prompt[:limit]):
        word = match.group(0)
        for piece in re.sub(CAMEL, " ", word).split() if _is_identifier(word) else [word]:
            stem = _stem_word(piece.lower())
            if stem:
                surface.setdefault(stem[0], piece.lower())
            sequence.append(stem[0] if stem else None)
    return surface, sequence


def _known(term: str, context: Mapping[str, float] | set[str], min_prefix: int) -> bool:
    if term in context:
        return True
    if len(term) < min_prefix:
        return False
    return any(len(other) >= min_prefix and (other.startswith(term) or term.startswith(other)) for other in context)


def _readable(chosen: list[str], surface: Mapping[str, str], sequence: list[str | None], limit: int) -> list[str]:
    """The chosen stems as words; stems that stand next to each other in the prompt become one phrase."""
    wanted = set(chosen)
    phrases: list[list[str]] = []
    placed: set[str] = set()
    run: list[str] = []
    for stem in [*sequence, None]:
        if stem is not None and stem in wanted and stem not in run:
            run.append(stem)
            continue
        if len(run) > 1 and not placed.intersection(run):
            phrases.append(run)
            placed.update(run)
        run = [stem] if stem is not None and stem in wanted else []
    out: list[str] = []
    used: set[str] = set()
    for stem in chosen:
        if stem in used:
            continue
        phrase = next((p for p in phrases if stem in p), None)
        group = phrase if phrase else [stem]
        used.update(group)
        out.append(" ".join(surface.get(s, s) for s in group))
        if sum(len(item.split()) for item in out) >= limit:
            break
    return out


# ---------------------------------------------------------------------------------------------------------
# the verdict


def _cue(prompt: str, rules: Rules, kind: str) -> bool:
    """Does the prompt carry a discourse marker of this kind ("pivot" or "continuation")?"""
    from gate.literals import LazyPattern  # only for a prompt whose verdict a cue can change

    text = prompt[:2000]
    table = getattr(rules, "literals", {})
    # One at a time, stopping at the first that matches, each compiled only when the prompt holds a string it
    # requires (gate/literals.py): compiling one costs ~0.1 ms.
    return any(
        LazyPattern(str(pattern), re.IGNORECASE, table.get(str(pattern))).search(text)
        for pattern in _section(rules, "cues").get(kind, [])
    )


def assess(
    prompt: str | PromptText,
    record: TopicRecord | None,
    touched_files: Iterable[str],
    rules: Rules,
    previous_text: str = "",
    noise: frozenset[str] = frozenset(),
) -> ShiftVerdict:
    """Shift or not. `previous_text` (optional): the last assistant reply, whose words a follow-up reuses;
    `noise`: terms of this project that say nothing about a prompt's subject."""
    analysed = prompt if isinstance(prompt, PromptText) else None
    if (analysed.trivial if analysed is not None else is_trivial(prompt, rules)):
        return ShiftVerdict(False, "trivial", [], 0.0)
    text = analysed.text if analysed is not None else prompt
    weak = _weak(rules)
    weak_weight = _num(rules, "shift", "weak_weight", 0.25)
    pair_weight = _num(rules, "shift", "pair_weight", 0.5)
    counts: dict[str, int] = {}
    for term in _content(prompt, rules, noise):
        counts[term] = counts.get(term, 0) + 1
    if not counts:
        return ShiftVerdict(False, "trivial", [], 0.0)
    min_weight = _num(rules, "record", "min_weight", 0.1)
    min_prefix = int(_num(rules, "shift", "prefix_match_min", 4))

    context: dict[str, float] = {}
    if record:
        context.update({t: w for t, w in record.weights.items() if w >= min_weight})
    for term in path_terms(touched_files, rules):
        context.setdefault(term, 1.0)
    reply_chars = int(_num(rules, "shift", "previous_text_chars", 4000))
    for term in terms(previous_text[-reply_chars:]) if previous_text else []:
        context.setdefault(term, 1.0)

    # Weight per term: repeats count, but sub-linearly (a word said three times is not three topics).
    # A character pair of an unspaced script is half a word ("確認檔案" gives three pairs for two words).
    weights = {
        t: (1.0 + math.log(c)) * (weak_weight if t in weak else pair_weight if _is_pair(t) else 1.0)
        for t, c in counts.items()
    }
    new = {t for t in weights if not _known(t, context, min_prefix)}
    content = [t for t in weights if t not in weak]
    # Shared terms weigh known_weight times more: a follow-up adds new details, a new subject shares nothing.
    known_weight = _num(rules, "shift", "known_weight", 1.0)
    new_weight = sum(weights[t] for t in new)
    total = new_weight + known_weight * sum(w for t, w in weights.items() if t not in new)
    novelty = new_weight / total if total else 0.0

    # Strongest terms: new content words first, then known ones; earlier words win ties.
    order = {t: i for i, t in enumerate(counts)}
    ranked = sorted(weights, key=lambda t: (-(weights[t] * (1.5 if t in new else 1.0)), order[t]))
    ranked = [t for t in ranked if t not in weak] or ranked
    chosen = ranked[:6]
    surface, sequence = _surface_map(text, rules)
    readable = _readable(chosen, surface, sequence, 6)
    stems = chosen

    if len(content) < int(_num(rules, "shift", "min_content_terms", 1)):
        return ShiftVerdict(False, "trivial", readable, round(novelty, 3), stems)
    if not record:
        return ShiftVerdict(True, "first_prompt", readable, 1.0, stems)
    new_content = sum(pair_weight if _is_pair(t) else 1.0 for t in new if t not in weak)
    threshold = _num(rules, "shift", "novelty_threshold", 0.8)
    min_new = int(_num(rules, "shift", "min_new_terms", 4))

    def passes(bar: float, count: int) -> bool:
        return novelty >= bar and new_content >= count

    # A pivot cue lowers the bar, a continuation cue raises it. The cue regexes are only compiled and run
    # when they can change the answer (compiling them costs a hook several ms).
    strict = passes(
        _num(rules, "cues", "continuation_threshold", 0.99),
        min_new + int(_num(rules, "cues", "continuation_extra_terms", 2)),
    )
    if strict:
        shift = True
    elif passes(threshold, min_new):
        shift = _cue(text, rules, "pivot") or not _cue(text, rules, "continuation")
    elif passes(_num(rules, "cues", "pivot_novelty", 0.3), 1):
        shift = _cue(text, rules, "pivot")
    else:
        shift = False
    return ShiftVerdict(shift, "topic_shift" if shift else "no_shift", readable, round(novelty, 3), stems)


def _is_pair(term: str) -> bool:
    """A two-character term beyond ASCII: a pair cut from unspaced text (gate.textproc.prepare)."""
    return len(term) == 2 and not term.isascii()


def update(
    record: TopicRecord | None,
    prompt: str | PromptText,
    rules: Rules | None = None,
    touched_files: Iterable[str] = (),
    noise: frozenset[str] = frozenset(),
) -> TopicRecord:
    """Decay the record one step and add the prompt's terms (and, lighter, the touched files' parts)."""
    if rules is None:
        from gate.rules import load_rules

        rules = load_rules("topic_shift")
    decay = _num(rules, "record", "decay", 0.6)
    per_prompt = _num(rules, "record", "prompt_weight", 1.0)
    ceiling = _num(rules, "record", "max_weight", 3.0)
    file_weight = _num(rules, "record", "file_weight", 0.6)
    min_weight = _num(rules, "record", "min_weight", 0.1)
    max_terms = int(_num(rules, "record", "max_terms", 150))
    weak = _weak(rules)

    weights = {t: w * decay for t, w in (record.weights if record else {}).items()}
    for term in set(_content(prompt, rules, noise)):
        if term not in weak:
            weights[term] = min(ceiling, weights.get(term, 0.0) + per_prompt)
    for term in path_terms(touched_files, rules):
        if term not in weak:
            weights[term] = min(ceiling, max(weights.get(term, 0.0), file_weight))
    kept = sorted(((t, w) for t, w in weights.items() if w >= min_weight), key=lambda tw: -tw[1])[:max_terms]
    return TopicRecord(weights=dict(kept), prompts=(record.prompts if record else 0) + 1)
