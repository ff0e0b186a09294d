"""What the session is doing, as one weighted query (hot path): the prompt, the reply it answers, and what the
last turn touched.

A prompt alone is a poor query: "yes", "1", "continue" say nothing, and a follow-up names one detail of a subject
the reply before it spelled out. So the recall gate searches for the prompt's terms at full weight, the reply's
together at a share of the prompt's (its own subject leads; the reply is the query when the prompt has no term
of its own), and the touched files' parts at a lower weight. Every weight is in rules/recall.toml [query].
"""

from __future__ import annotations

from gate.rule_reading import number

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from gate.gates.recall.prompt import PromptText


class Activity:
    """The weighted query: term -> weight, strongest first, plus where each weight came from."""

    __slots__ = ("content_free", "prompt_terms", "reply_terms", "reply_weight", "touched_terms", "weights")

    def __init__(self) -> None:
        self.weights: dict[str, float] = {}
        self.prompt_terms: list[str] = []
        self.reply_terms: list[str] = []
        self.touched_terms: list[str] = []
        self.reply_weight = 0.0  # each reply term's weight: a share of the prompt's when the prompt has terms
        self.content_free = False

    @property
    def terms(self) -> list[str]:
        return list(self.weights)

    def add(self, term: str, weight: float) -> None:
        if weight > 0:
            self.weights[term] = self.weights.get(term, 0.0) + weight

    def to_json(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt_terms,
            "reply": self.reply_terms[:12],
            "touched": self.touched_terms[:8],
            "content_free": self.content_free,
            "reply_weight": round(self.reply_weight, 3),
        }


def reply_terms(reply_terms: list[str], drop: frozenset[str] | set[str], limit: int) -> list[str]:
    """The reply's distinct terms, the most repeated first (ties: first said first), `drop` left out."""
    counts: dict[str, int] = {}
    for term in reply_terms:
        if term not in drop:
            counts[term] = counts.get(term, 0) + 1
    order = {t: i for i, t in enumerate(counts)}
    return sorted(counts, key=lambda t: (-counts[t], order[t]))[:limit]


def build(
    prompt: PromptText,
    query_rules: Mapping[str, Any],
    shift_rules: Mapping[str, Any],
    drop: frozenset[str] | set[str] = frozenset(),
    max_terms: int = 32,
) -> Activity:
    """The query for this prompt, the reply it answers and the files the last turn touched, all read from the
    prompt's analysis (its reply is the end that rules/recall.toml [query] reply_chars keeps). `drop`: terms that
    name nothing here (the project's path words, the words most memories share), left out of the reply's and the
    touched files' terms — and of the prompt's when rules/recall.toml [query] raw_prompt is false."""
    activity = Activity()
    if prompt.trivial:  # "yes", "2", "continue": its words are the answer's form, not its subject
        own: list[str] = []
    elif query_rules.get("raw_prompt", True):
        own = prompt.raw[:max_terms]
    else:
        from gate.gates.recall.prompt import query_terms

        own = query_terms(prompt, shift_rules, prompt.noise, max_terms)
    activity.prompt_terms = own
    activity.content_free = len(own) < int(number(query_rules, "content_free_terms", 3))
    prompt_weight = number(query_rules, "prompt", 1.0)
    reply_weight = number(query_rules, "reply_content_free" if activity.content_free else "reply", 0.5)
    for term in own:
        activity.add(term, prompt_weight)
    if reply_weight > 0:
        left_out = set(drop) | prompt.weak | prompt.rules_noise
        activity.reply_terms = reply_terms(prompt.reply_terms, left_out, int(number(query_rules, "reply_terms", 16)))
        if own and activity.reply_terms:
            # The prompt's own words lead: the reply's terms together weigh at most a share of the prompt's, so
            # a reply's sixteen terms cannot outvote a prompt's few (the reply fills in, it does not decide).
            share = number(query_rules, "reply_share_content_free" if activity.content_free else "reply_share", 0)
            if share > 0:
                reply_weight = min(reply_weight, share * prompt_weight * len(own) / len(activity.reply_terms))
        activity.reply_weight = reply_weight if activity.reply_terms else 0.0
        for term in activity.reply_terms:
            activity.add(term, reply_weight)
    touched_weight = number(query_rules, "touched", 0.0)
    if touched_weight > 0:
        activity.touched_terms = sorted(t for t in prompt.touched if t not in drop)
        for term in activity.touched_terms:
            activity.add(term, touched_weight)
    ranked = sorted(activity.weights.items(), key=lambda tw: -tw[1])[:max_terms]  # stable: prompt's order first
    activity.weights = dict(ranked)
    return activity
