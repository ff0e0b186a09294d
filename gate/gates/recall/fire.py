"""The recall gate (UserPromptSubmit): search memory for what the session is doing and inject what stands out.

The query is the current activity (gate/gates/recall/query.py): the prompt, the reply it answers, what the last
turn touched; a prompt with no content of its own ("yes", "2") is searched by the reply it answers. A memory is
delivered when its score, standardised over the store's scores for that query, passes a floor that means the
same in a store of 20 memories and of 100,000 (rules/recall.toml [fire]), at most k a prompt, never twice in a
compaction window. Whether the prompt shifts the topic (gate/gates/recall/topic.py) is the reason given, not a
precondition. A follow-up none of whose pairs of terms names an undelivered memory (the cue table's pair
filter answers without the index) stays silent without opening the index.
"""

from __future__ import annotations

from gate.gates.base import HookContext, Outcome, additional_context
from gate.gates.recall import prompt as analysis
from gate.gates.recall import search_first, topic
from gate.gates.recall.prompt_cues import on_prompt, withheld
from gate.gates.recall.query import build as build_query
from gate.memory.cues.shards import named_terms  # (loaded already: the prompt cues read the cue table)
from gate.rule_reading import number as _num
from gate.session.ledger import Ledger
from gate.session.mute import muted_by
from gate.session.transcript import previous_turn

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

    from gate.gates.recall.query import Activity
    from gate.memory.cues.shards import PairFilter
    from gate.memory.search import Hit, SearchResult


def _pair_filter(ctx: HookContext) -> PairFilter | None:
    try:
        return ctx.cue_table.pairs()
    except Exception:  # the cue table must not cost the recall gate its answer
        return None


MAX_SPENT_PAIRS = 4000


def _pair(first: str, second: str) -> str:
    return f"{first} {second}" if first <= second else f"{second} {first}"


def _named_pairs(pairs: PairFilter | None, query: list[str], spent: set[str], most_terms: int = 24) -> int:
    """1 when some pair of the query's terms (its strongest first) names a memory together, leaving out the pairs
    that name a memory already delivered in this window; else 0 (also without a filter). It stops at the first:
    with the reply's terms a query has hundreds of pairs, and a silent prompt pays for each probe."""
    if pairs is None:
        return 0
    terms = query[:most_terms]
    return int(any(
        _pair(a, b) not in spent and pairs.named_together(a, b) for i, a in enumerate(terms) for b in terms[i + 1 :]
    ))


def _spend(ledger: Ledger, records: list[dict[str, Any]]) -> None:
    """Remember the pairs of terms that name what was just delivered."""
    spent = dict.fromkeys(ledger.spent_pairs)
    for record in records:
        found = sorted(named_terms(record))
        spent.update((_pair(a, b), None) for i, a in enumerate(found) for b in found[i + 1 :])
    ledger.spent_pairs = list(spent)[-MAX_SPENT_PAIRS:]


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
    """The recall gate's answer, plus memories cued by keywords or by the prompt itself
    (gate/gates/recall/prompt_cues.py), both reading the one analysis of the prompt."""
    analysed: dict[str, analysis.PromptText] = {}
    outcome = _recall(ctx, ledger, analysed)
    try:  # where recall fired, it asks for the agent's own search (gate/gates/recall/search_first.py)
        outcome = search_first.ask(ctx, ledger, outcome)
    except Exception as error:  # a broken ask must not cost the recall answer; then nothing is refused either
        ledger.search_request = None
        outcome.extra["search_first_error"] = type(error).__name__
    try:
        return on_prompt(ctx, ledger, outcome, analysed.get("prompt"))
    except Exception as error:  # a broken cue must not cost the recall answer
        outcome.extra["cues_error"] = type(error).__name__
        return outcome


def _noise(ctx: HookContext, pairs: PairFilter | None) -> frozenset[str]:
    """Terms of this project that say nothing about a prompt's subject: its path's words (and the recorded
    session's folder, when replayed), and the words most memories share."""
    cwd = ctx.event.get("cwd")
    noise = analysis.project_words(ctx.paths.root) | analysis.project_words(cwd if isinstance(cwd, str) else "")
    return noise | pairs.common if pairs is not None else noise


def _weigh_by_prompts(
    ctx: HookContext, query: Activity, count: bool, pairs: PairFilter | None,
    recall_rules: dict[str, Any], extra: dict[str, Any], prompt: str = "",
) -> bool:
    """Weigh the prompt's terms down by how many of the project's prompts use them (rules/recall.toml
    [prompt_terms]), then count this prompt in the table. True for a scripted prompt: one of at least
    scripted_min_terms terms the project has sent word for word scripted_after times before."""
    conf = recall_rules.get("prompt_terms", {})
    if not conf.get("enabled", True) or not query.prompt_terms:
        return False
    from gate.session import prompt_terms

    repeated = False

    try:
        table = prompt_terms.PromptTerms.load(ctx.paths)
        common = pairs.common if pairs is not None else ()
        factors = prompt_terms.weights(query.prompt_terms, table, common, conf)
        for term, factor in factors.items():
            if term in query.weights:
                query.weights[term] *= factor
        if factors:
            query.weights = dict(sorted(query.weights.items(), key=lambda tw: -tw[1]))
            extra["damped"] = sorted(factors)[:12]
        after = int(_num(conf, "scripted_after", 0))
        if after > 0 and len(query.prompt_terms) >= int(_num(conf, "scripted_min_terms", 8)):
            repeated = table.seen(prompt) >= after
        if count:
            table.add(query.prompt_terms, prompt)
    except OSError as error:  # the table is a refinement: without it the query stands as built
        extra["prompt_terms_error"] = type(error).__name__
    return repeated


def _last_reply(texts: list[str], chars: int) -> str:
    """The end of what the assistant wrote last: the reply a prompt answers."""
    text = ""
    for part in reversed(texts):
        text = f"{part}\n{text}" if text else part
        if len(text) >= chars:
            break
    return text[-chars:]


def _recall(ctx: HookContext, ledger: Ledger, analysed_out: dict[str, analysis.PromptText]) -> Outcome:
    """The recall gate's own answer; the prompt's analysis, when it came to one, is left in `analysed_out`."""
    prompt = ctx.event.get("prompt")
    if not isinstance(prompt, str):
        return Outcome("skipped", "SKIP_NO_PROMPT", gate="recall")
    if ledger.muted or muted_by(ctx.paths, False) or not ctx.settings.get("recall", True):
        return Outcome("skipped", "SKIP_MUTED", gate="recall")
    rules = ctx.rules("topic_shift")
    recall_rules = ctx.rules("recall")
    floor = recall_rules.get("floor", {})
    query_rules = recall_rules.get("query", {})
    prompt = prompt[: int(floor.get("max_prompt_chars", 6000))]
    kind = analysis.trivial_kind(prompt, rules)
    if kind == "command" or (kind == "answer" and not query_rules.get("answers", True)):
        return Outcome("skipped", "SKIP_TRIVIAL_PROMPT", gate="recall")
    pairs = _pair_filter(ctx)
    # The previous turn matters: a follow-up reuses the words of the answer it follows, "yes" means its subject.
    # The prompt is analysed once, with the end of that reply and the files that turn touched: the verdict, the
    # record and the query read the one analysis.
    previous = previous_turn(ctx.transcript_path, end=ctx.transcript_end)
    reply = _last_reply(previous.assistant_texts, int(_num(query_rules, "reply_chars", 4000)))
    analysed = analysed_out["prompt"] = analysis.PromptText(
        prompt, rules, _noise(ctx, pairs), trivial=kind, reply=reply, touched=previous.touched_files()
    )
    forced = ledger.force_shift
    record = topic.TopicRecord.from_dict(ledger.topic)
    verdict = topic.assess(analysed, None if forced else record, (), rules)
    if kind is None:
        ledger.prompts += 1
        ledger.topic = topic.update(record, analysed, rules).to_dict()
    extra: dict[str, Any] = {"novelty": verdict.novelty, "terms": verdict.terms, "shift": verdict.shift}
    query = build_query(analysed, query_rules, rules, analysed.noise)
    repeated = _weigh_by_prompts(ctx, query, kind is None and not query.content_free, pairs, recall_rules, extra,
                                 prompt)
    extra["query"] = query.to_json()
    if repeated:
        return Outcome("skipped", "SKIP_SCRIPTED_PROMPT", gate="recall", extra=extra)
    if not query.weights:
        return Outcome("skipped", "SKIP_TRIVIAL_PROMPT", gate="recall", extra=extra)
    fire_rules = recall_rules.get("fire", {})
    if not verdict.shift and fire_rules.get("pair_gate", True) and pairs is not None:
        # Not a new subject: memory is worth a look only when two of the query's terms together name a memory
        # not delivered in this window (the pair filter answers without the index: such a follow-up costs no
        # search). Without a filter (a store too young to have one), search.
        gate_terms = query.terms if query.content_free or fire_rules.get("pair_gate_reply", True) else \
            query.prompt_terms
        named = _named_pairs(pairs, gate_terms, set(ledger.spent_pairs))
        if not named:
            return Outcome("skipped", "SKIP_NO_SHIFT", gate="recall", extra=extra)
        extra["named_pairs"] = named
    if verdict.shift:
        ledger.force_shift = ""
    messages = ctx.rules("messages")["recall"]
    if forced == "compaction":
        reason_code, reason_text = "FIRED_AFTER_COMPACTION", messages["reason_compact"]
    elif forced or verdict.reason == "first_prompt":
        reason_code, reason_text = "FIRED_SESSION_START", messages["reason_first"]
    elif verdict.shift:
        reason_code, reason_text = "FIRED_TOPIC_SHIFT", messages["reason_shift"]
    else:
        reason_code, reason_text = "FIRED_RELEVANT", messages.get("reason_relevant", messages["reason_shift"])
    shown = verdict.terms if not query.content_free else []
    # A prompt with content of its own asks about it: a memory only the reply or the touched files name is
    # context, not an answer (rules/recall.toml [fire] min_prompt_terms).
    own = set() if query.content_free else set(query.prompt_terms)
    return deliver(ctx, ledger, query.terms, query.weights, reason_code, reason_text, shown, extra, own=own,
                   follow_up=not verdict.shift and not forced)


def deliver(
    ctx: HookContext,
    ledger: Ledger,
    terms: list[str],
    weights: dict[str, float] | None,
    reason_code: str,
    reason_text: str,
    shown_terms: list[str],
    extra: dict[str, Any],
    own: set[str] | frozenset[str] = frozenset(),
    follow_up: bool = False,
) -> Outcome:
    """Search for a query and deliver what passes the floor (rules/recall.toml [fire]), as one additionalContext
    of the prompt; what it delivers is marked in the ledger. `follow_up`: the prompt does not shift the topic
    (it passed the pair filter), so a hit must hold [fire] follow_up_min_terms of its terms."""
    index = ctx.index
    index.catch_up_for_hook()
    if not index.exists():
        return Outcome("skipped", "SKIP_NO_INDEX", gate="recall", extra=extra)
    hits, related, result = find(ctx, terms, weights, set(ledger.delivered), own, follow_up)
    extra["trace"] = result.trace_json()
    suppressed = [c.id for c in result.candidates if c.disposition == "ALREADY_DELIVERED"]
    if not hits:
        reason = "SUPPRESSED_ALREADY_DELIVERED" if suppressed else "SKIP_NO_HITS"
        return Outcome("skipped", reason, gate="recall", suppressed=suppressed, extra=extra)
    extra["related"] = [{"id": r.id, "edge": r.edge, "from": r.from_id} for r in related]  # for `gate trace`
    from gate.render import budget_chars

    limit = budget_chars(int(ctx.settings.get("recall_budget_tokens", 1500)))
    text, kept, dropped = render(reason_text, shown_terms, hits, related, ctx, limit)
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


def find(
    ctx: HookContext,
    terms: list[str],
    weights: dict[str, float] | None,
    exclude: set[str],
    own: set[str] | frozenset[str] = frozenset(),
    follow_up: bool = False,
) -> tuple[list[Hit], list[Any], SearchResult]:
    """The hits that pass the floor (rules/recall.toml [fire]) for a query, at most k, none of `exclude` nor
    outside its time window, with their related memories and the search result (its trace). The index must
    exist (the caller caught it up)."""
    fire = ctx.rules("recall").get("fire", {})
    hidden = withheld(ctx)  # expired or not yet due by their own triggers
    most = min(int(ctx.settings.get("recall_max_hits", 5)), int(_num(fire, "max_per_prompt", 3)))
    from gate.memory.search import search  # only when there is reason to look: a follow-up never pays for it

    result = search(
        ctx.index, "", limit=most, exclude=exclude | hidden, terms=terms, weights=weights,
        rules=ctx.rules("search"), min_z=_num(fire, "min_z", 2.5), exact=bool(fire.get("exact", False)),
        attainable=_num(fire, "attainable_share", 0.8), small_store=int(_num(fire, "small_store", 0)),
        reference_store=int(_num(fire, "reference_store", 0)), zero_scores=int(_num(fire, "zero_scores", 0)),
    )
    least = int(_num(fire, "min_matched_terms", 1))
    least_own = int(_num(fire, "min_prompt_terms", 0)) if own else 0
    if follow_up:  # of the prompt's own terms when it has any, else of the query's (the reply's)
        need = int(_num(fire, "follow_up_min_terms", 1))
        least_own, least = (max(least_own, need), least) if own else (least_own, max(least, need))
    hits = [hit for hit in result.hits
            if len(hit.matched) >= least and sum(1 for t in hit.matched if t in own) >= least_own]
    for candidate in result.candidates:
        if candidate.disposition == "ADMITTED" and candidate.id not in {h.id for h in hits}:
            candidate.disposition = "BELOW_TERM_FLOOR"
        elif candidate.id in hidden:
            candidate.disposition = "OUTSIDE_WINDOW"
    related = result.related if hits == result.hits else [
        r for r in result.related if r.from_id in {h.id for h in hits}
    ]
    return hits, related, result


def task_query(ctx: HookContext, text: str, reply: str = "") -> Activity | None:
    """The query for a free text (a subagent's task, say) as for a prompt: its own terms, and the reply it
    answers when there is one; None for a text that is no request (a slash command, a program's notice)."""
    rules = ctx.rules("topic_shift")
    recall_rules = ctx.rules("recall")
    text = text[: int(recall_rules.get("floor", {}).get("max_prompt_chars", 6000))]
    kind = analysis.trivial_kind(text, rules)
    if kind == "command":
        return None
    query_rules = recall_rules.get("query", {})
    reply = reply[-int(_num(query_rules, "reply_chars", 4000)):] if reply else ""
    analysed = analysis.PromptText(text, rules, _noise(ctx, _pair_filter(ctx)), trivial=kind, reply=reply)
    return build_query(analysed, query_rules, rules, analysed.noise)
