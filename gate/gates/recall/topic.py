"""Recall gate: does this prompt shift the session's topic? (hot path, standard library + tantivy)

Deterministic and lexical. A prompt's content terms (gate/gates/recall/prompt.py: stemmed, stopwords out,
identifiers split; the verdict reads the prompt's analysis, and calls nothing back there) are compared with a
decayed record of the recent prompts' terms, the reply it answers and the path parts of the files the last turn
touched. When enough of the prompt's weight is new, it is a shift and its strongest terms become
the memory search. Every threshold and word list is data in rules/topic_shift.toml.
"""

from __future__ import annotations

import math

from gate.gates.recall.prompt import PromptText
from gate.rule_reading import rule_number, rule_section

TYPE_CHECKING = False  # typing and dataclasses cost the hook milliseconds to import; annotations are strings
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    Rules = Mapping[str, Any]


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
    from gate.literals import IGNORECASE, LazyPattern  # only for a prompt whose verdict a cue can change

    text = prompt[:2000]
    table = getattr(rules, "literals", {})
    # One at a time, stopping at the first that matches, each compiled only when the prompt holds a string it
    # requires (gate/literals.py): compiling one costs ~0.1 ms.
    return any(
        LazyPattern(str(pattern), IGNORECASE, table.get(str(pattern))).search(text)
        for pattern in rule_section(rules, "cues").get(kind, [])
    )


def assess(
    prompt: str | PromptText,
    record: TopicRecord | None,
    touched_files: Iterable[str],
    rules: Rules,
    previous_text: str = "",
    noise: frozenset[str] = frozenset(),
) -> ShiftVerdict:
    """Shift or not. A PromptText carries the reply it answers and the files the last turn touched; for a plain
    string, `touched_files`, `previous_text` (the last assistant reply, whose words a follow-up reuses; its end,
    rules/topic_shift.toml previous_text_chars) and `noise` (terms of this project that say nothing about a
    prompt's subject) stand in."""
    if isinstance(prompt, PromptText):
        analysed = prompt
    else:
        reply_chars = int(rule_number(rules, "shift", "previous_text_chars", 4000))
        analysed = PromptText(prompt, rules, noise, reply=previous_text[-reply_chars:], touched=touched_files)
    if analysed.trivial:
        return ShiftVerdict(False, "trivial", [], 0.0)
    text = analysed.text
    weak = analysed.weak
    weak_weight = rule_number(rules, "shift", "weak_weight", 0.25)
    pair_weight = rule_number(rules, "shift", "pair_weight", 0.5)
    counts: dict[str, int] = {}
    for term in analysed.content:
        counts[term] = counts.get(term, 0) + 1
    if not counts:
        return ShiftVerdict(False, "trivial", [], 0.0)
    min_weight = rule_number(rules, "record", "min_weight", 0.1)
    min_prefix = int(rule_number(rules, "shift", "prefix_match_min", 4))

    context: dict[str, float] = {}
    if record:
        context.update({t: w for t, w in record.weights.items() if w >= min_weight})
    for term in analysed.touched:
        context.setdefault(term, 1.0)
    for term in analysed.reply_terms:
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
    known_weight = rule_number(rules, "shift", "known_weight", 1.0)
    new_weight = sum(weights[t] for t in new)
    total = new_weight + known_weight * sum(w for t, w in weights.items() if t not in new)
    novelty = new_weight / total if total else 0.0

    # Strongest terms: new content words first, then known ones; earlier words win ties.
    order = {t: i for i, t in enumerate(counts)}
    ranked = sorted(weights, key=lambda t: (-(weights[t] * (1.5 if t in new else 1.0)), order[t]))
    ranked = [t for t in ranked if t not in weak] or ranked
    chosen = ranked[:6]
    surface, sequence = analysed.surface_words or ({}, [])
    readable = _readable(chosen, surface, sequence, 6)
    stems = chosen

    if len(content) < int(rule_number(rules, "shift", "min_content_terms", 1)):
        return ShiftVerdict(False, "trivial", readable, round(novelty, 3), stems)
    if not record:
        return ShiftVerdict(True, "first_prompt", readable, 1.0, stems)
    new_content = sum(pair_weight if _is_pair(t) else 1.0 for t in new if t not in weak)
    threshold = rule_number(rules, "shift", "novelty_threshold", 0.8)
    min_new = int(rule_number(rules, "shift", "min_new_terms", 4))

    def passes(bar: float, count: int) -> bool:
        return novelty >= bar and new_content >= count

    # A pivot cue lowers the bar, a continuation cue raises it. The cue regexes are only compiled and run
    # when they can change the answer (compiling them costs a hook several ms).
    strict = passes(
        rule_number(rules, "cues", "continuation_threshold", 0.99),
        min_new + int(rule_number(rules, "cues", "continuation_extra_terms", 2)),
    )
    if strict:
        shift = True
    elif passes(threshold, min_new):
        shift = _cue(text, rules, "pivot") or not _cue(text, rules, "continuation")
    elif passes(rule_number(rules, "cues", "pivot_novelty", 0.3), 1):
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
    """Decay the record one step and add the prompt's terms (and, lighter, the touched files' parts). A PromptText
    carries the touched files; for a plain string, `touched_files` and `noise` stand in."""
    if rules is None:
        from gate.rules import load_rules

        rules = load_rules("topic_shift")
    analysed = prompt if isinstance(prompt, PromptText) else PromptText(
        prompt, rules, noise, trivial=None, touched=touched_files
    )
    decay = rule_number(rules, "record", "decay", 0.6)
    per_prompt = rule_number(rules, "record", "prompt_weight", 1.0)
    ceiling = rule_number(rules, "record", "max_weight", 3.0)
    file_weight = rule_number(rules, "record", "file_weight", 0.6)
    min_weight = rule_number(rules, "record", "min_weight", 0.1)
    max_terms = int(rule_number(rules, "record", "max_terms", 150))
    weak = analysed.weak

    weights = {t: w * decay for t, w in (record.weights if record else {}).items()}
    # In the prompt's order, the paths' sorted: the record is cut at max_terms among equal weights, and a set's
    # order changes with the process's hash seed (the same session replayed gave another verdict).
    for term in dict.fromkeys(analysed.content):
        if term not in weak:
            weights[term] = min(ceiling, weights.get(term, 0.0) + per_prompt)
    for term in analysed.touched:
        if term not in weak:
            weights[term] = min(ceiling, max(weights.get(term, 0.0), file_weight))
    kept = sorted(((t, w) for t, w in weights.items() if w >= min_weight), key=lambda tw: -tw[1])[:max_terms]
    return TopicRecord(weights=dict(kept), prompts=(record.prompts if record else 0) + 1)
