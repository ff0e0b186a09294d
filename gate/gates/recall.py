"""The recall gate (UserPromptSubmit): on a topic shift, search memory and inject what it found.

Silent unless there is something to read: trivial prompts, follow-ups on the same topic, and shifts that
find nothing pass without a word. What was delivered in this compaction window is not repeated.
"""

from __future__ import annotations

from gate.gates import topic
from gate.gates.base import HookContext, Outcome, additional_context
from gate.gates.prompt_cues import on_prompt, withheld
from gate.session.ledger import Ledger
from gate.session.mute import muted_by
from gate.session.transcript import previous_turn

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

    from gate.memory.search import Hit


def _passes_floor(hit: Hit, query_size: int, floor: dict[str, Any]) -> bool:
    needed = 1 if query_size <= int(floor.get("short_prompt_terms", 2)) else int(floor.get("min_matched_terms", 2))
    return len(hit.matched) >= needed


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
    verdict = topic.assess(prompt, None if forced else record, touched, rules, previous.text)
    ledger.topic = topic.update(record, prompt, rules, touched).to_dict()
    extra: dict[str, Any] = {"novelty": verdict.novelty, "terms": verdict.terms, "shift": verdict.shift}
    if verdict.reason == "trivial":
        return Outcome("skipped", "SKIP_TRIVIAL_PROMPT", gate="recall", extra=extra)
    if not verdict.shift:
        return Outcome("skipped", "SKIP_NO_SHIFT", gate="recall", extra=extra)
    ledger.force_shift = ""
    index = ctx.index
    index.catch_up_for_hook()
    if not index.exists():
        return Outcome("skipped", "SKIP_NO_INDEX", gate="recall", extra=extra)
    hidden = withheld(ctx)  # expired or not yet due by their own triggers
    max_hits = int(ctx.settings.get("recall_max_hits", 5))
    from gate.memory.search import search  # only on a shift: a follow-up prompt never pays for it

    result = search(index, prompt, limit=max_hits, exclude=set(ledger.delivered) | hidden)
    query_size = len(result.terms)
    hits = [hit for hit in result.hits if _passes_floor(hit, query_size, floor)]
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
    else:
        reason_code, reason_text = "FIRED_TOPIC_SHIFT", messages["reason_shift"]
    from gate.render import budget_chars

    limit = budget_chars(int(ctx.settings.get("recall_budget_tokens", 1500)))
    text, kept, dropped = render(reason_text, verdict.terms, hits, related, ctx, limit)
    ledger.mark_delivered(kept)
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
