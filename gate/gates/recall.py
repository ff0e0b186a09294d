"""The recall gate (UserPromptSubmit): search memory and inject what it found — on a topic shift, or when the
prompt names memories not yet delivered (two of its terms together in one memory's title, tags or cues).

Silent unless there is something to read: trivial prompts, follow-ups that name nothing new, and searches that
find nothing pass without a word. What was delivered in this compaction window is not repeated.
"""

from __future__ import annotations

from gate.gates import topic
from gate.gates.base import HookContext, Outcome, additional_context
from gate.gates.prompt_cues import on_prompt, withheld
from gate.memory.cues import named_terms  # (loaded already: the prompt cues read the cue table)
from gate.session.ledger import Ledger
from gate.session.mute import muted_by
from gate.session.transcript import previous_turn

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

    from gate.memory.cues import PairFilter
    from gate.memory.search import Hit


def _passes_floor(hit: Hit, query_size: int, floor: dict[str, Any]) -> bool:
    needed = 1 if query_size <= int(floor.get("short_prompt_terms", 2)) else int(floor.get("min_matched_terms", 2))
    return len(hit.matched) >= needed


def _pair_filter(ctx: HookContext) -> PairFilter | None:
    try:
        return ctx.cue_table.pairs()
    except Exception:  # the cue table must not cost the recall gate its answer
        return None


MAX_SPENT_PAIRS = 4000


def _pair(first: str, second: str) -> str:
    return f"{first} {second}" if first <= second else f"{second} {first}"


def _named_pairs(pairs: PairFilter | None, query: list[str], spent: set[str], most_terms: int = 24) -> int:
    """How many pairs of the query's terms name some memory together (0 without a filter), leaving out the
    pairs that name a memory already delivered in this window."""
    if pairs is None:
        return 0
    terms = query[:most_terms]
    return sum(
        1 for i, a in enumerate(terms) for b in terms[i + 1 :]
        if _pair(a, b) not in spent and pairs.named_together(a, b)
    )


def _spend(ledger: Ledger, records: list[dict[str, Any]]) -> None:
    """Remember the pairs of terms that name what was just delivered."""
    spent = dict.fromkeys(ledger.spent_pairs)
    for record in records:
        found = sorted(named_terms(record))
        spent.update((_pair(a, b), None) for i, a in enumerate(found) for b in found[i + 1 :])
    ledger.spent_pairs = list(spent)[-MAX_SPENT_PAIRS:]


def _named(hit: Hit, query: list[str], relevance: dict[str, Any]) -> bool:
    """Does the memory's title, tags or cues hold enough of the prompt's terms (as the pair filter counts them)?"""
    named = set(named_terms(hit.record))
    return sum(1 for t in query if t in named) >= int(relevance.get("min_named_terms", 2))


def render(
    reason: str, terms: list[str], hits: list[Hit], related: list[Any], ctx: HookContext, limit: int
) -> tuple[str, list[str], list[str]]:
    from gate.render import clean, fit, gate_command, index_line  # only when there is something to say

    messages = ctx.rules("messages")["recall"]
    with_body = set(ctx.rules("recall").get("delivery", {}).get("with_body", []))
    gate = gate_command()
    header = [messages["header"].format(reason=reason)]
    if terms:
        header.append(messages["search_for"].format(terms=", ".join(clean(t, 40) for t in terms)))
    items: list[tuple[str, str]] = []
    for hit in hits:
        extra = f" (supersedes {', '.join(hit.superseding)})" if hit.superseding else ""
        items.append((hit.id, index_line(hit.record, with_body=hit.record["kind"] in with_body, extra=extra,
                                         root=ctx.paths.root)))
    if related:
        items.append(("", messages["related_header"]))
        for rel in related:
            items.append((rel.id, index_line(rel.record, extra=f" ({rel.edge} {rel.from_id})", root=ctx.paths.root)))
    records = [h.record for h in hits] + [r.record for r in related]
    personal = any(r.get("source") in ("human", "user") for r in records)
    footer = [
        messages["provenance_mixed" if personal else "provenance_agent"],
        messages["footer"].format(gate=gate),
    ]
    text, kept, dropped = fit(header, items, footer, limit)
    return text, [i for i in kept if i], [i for i in dropped if i]


def evaluate(ctx: HookContext, ledger: Ledger) -> Outcome:
    """The recall gate's answer, plus memories cued by keywords or by the prompt itself (gate/gates/anchors.py)."""
    outcome = _recall(ctx, ledger)
    try:
        return on_prompt(ctx, ledger, outcome)
    except Exception as error:  # a broken cue must not cost the recall answer
        outcome.extra["cues_error"] = type(error).__name__
        return outcome


def _recall(ctx: HookContext, ledger: Ledger) -> Outcome:
    prompt = ctx.event.get("prompt")
    if not isinstance(prompt, str):
        return Outcome("skipped", "SKIP_NO_PROMPT", gate="recall")
    if ledger.muted or muted_by(ctx.paths, False) or not ctx.settings.get("recall", True):
        return Outcome("skipped", "SKIP_MUTED", gate="recall")
    rules = ctx.rules("topic_shift")
    floor = ctx.rules("recall").get("floor", {})
    prompt = prompt[: int(floor.get("max_prompt_chars", 6000))]
    if topic.is_trivial(prompt, rules):
        return Outcome("skipped", "SKIP_TRIVIAL_PROMPT", gate="recall")
    ledger.prompts += 1
    record = topic.TopicRecord.from_dict(ledger.topic)
    # The previous reply matters: follow-ups reuse the words of the answer they follow.
    previous = previous_turn(ctx.transcript_path, end=ctx.transcript_end)
    touched = previous.touched_files()
    forced = ledger.force_shift
    cwd = ctx.event.get("cwd")  # (replayed: the recorded session's folder, whose words fill its prompts)
    noise = topic.project_words(ctx.paths.root) | topic.project_words(cwd if isinstance(cwd, str) else "")
    pairs = _pair_filter(ctx)
    if pairs is not None:
        noise = noise | pairs.common  # words most memories share name none of them
    verdict = topic.assess(prompt, None if forced else record, touched, rules, previous.text, noise)
    ledger.topic = topic.update(record, prompt, rules, touched, noise).to_dict()
    extra: dict[str, Any] = {"novelty": verdict.novelty, "terms": verdict.terms, "shift": verdict.shift}
    if verdict.reason == "trivial":
        return Outcome("skipped", "SKIP_TRIVIAL_PROMPT", gate="recall", extra=extra)
    relevance = ctx.rules("recall").get("relevance", {})
    query = topic.query_terms(prompt, rules, noise)
    if not verdict.shift:
        # No shift: memory is worth a look only when some memory is named by two of the prompt's terms together
        # (the pair filter answers without the index; a follow-up that names nothing costs no search).
        named = _named_pairs(pairs, query, set(ledger.spent_pairs)) if relevance.get("enabled", False) else 0
        if not named:
            return Outcome("skipped", "SKIP_NO_SHIFT", gate="recall", extra=extra)
        extra["named_pairs"] = named
    if verdict.shift:
        ledger.force_shift = ""
    index = ctx.index
    index.catch_up_for_hook()
    if not index.exists():
        return Outcome("skipped", "SKIP_NO_INDEX", gate="recall", extra=extra)
    hidden = withheld(ctx)  # expired or not yet due by their own triggers
    max_hits = int(ctx.settings.get("recall_max_hits", 5))
    from gate.memory.search import search  # only when there is reason to look: a follow-up never pays for it

    result = search(
        index, prompt, limit=max_hits, exclude=set(ledger.delivered) | hidden, terms=query, rules=ctx.rules("search"),
    )
    query_size = len(result.terms)
    if verdict.shift:
        hits = [hit for hit in result.hits if _passes_floor(hit, query_size, floor)]
    else:  # no shift: only memories the prompt names in their title, tags or cues are worth interrupting for
        hits = [hit for hit in result.hits if _named(hit, result.terms, relevance)]
        if not hits:
            extra["searched"] = "relevance"
            return Outcome("skipped", "SKIP_NO_SHIFT", gate="recall", extra=extra)
    for candidate in result.candidates:
        if candidate.disposition == "ADMITTED" and candidate.id not in {h.id for h in hits}:
            candidate.disposition = "BELOW_TERM_FLOOR"
        elif candidate.id in hidden:
            candidate.disposition = "OUTSIDE_WINDOW"
    extra["trace"] = result.trace_json()
    suppressed = [c.id for c in result.candidates if c.disposition == "ALREADY_DELIVERED"]
    if not hits:
        reason = "SUPPRESSED_ALREADY_DELIVERED" if suppressed else "SKIP_NO_HITS"
        return Outcome("skipped", reason, gate="recall", suppressed=suppressed, extra=extra)
    related = result.related if hits == result.hits else [
        r for r in result.related if r.from_id in {h.id for h in hits}
    ]
    extra["related"] = [{"id": r.id, "edge": r.edge, "from": r.from_id} for r in related]  # for `gate trace`
    messages = ctx.rules("messages")["recall"]
    if forced == "compaction":
        reason_code, reason_text = "FIRED_AFTER_COMPACTION", messages["reason_compact"]
    elif forced or verdict.reason == "first_prompt":
        reason_code, reason_text = "FIRED_SESSION_START", messages["reason_first"]
    elif verdict.shift:
        reason_code, reason_text = "FIRED_TOPIC_SHIFT", messages["reason_shift"]
    else:
        reason_code, reason_text = "FIRED_RELEVANT", messages.get("reason_relevant", messages["reason_shift"])
    from gate.render import budget_chars

    limit = budget_chars(int(ctx.settings.get("recall_budget_tokens", 1500)))
    text, kept, dropped = render(reason_text, verdict.terms, hits, related, ctx, limit)
    ledger.mark_delivered(kept)
    _spend(ledger, [h.record for h in hits if h.id in kept])
    ledger.injected_chars += len(text)
    return Outcome(
        "fired",
        reason_code,
        output=additional_context("UserPromptSubmit", text),
        gate="recall",
        delivered=kept,
        suppressed=suppressed,
        dropped=dropped,
        chars=len(text),
        extra=extra,
    )
