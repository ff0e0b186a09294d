"""Keyword and first-prompt cues (hot path): memories that come back when a prompt names their words.

They ride on the recall gate's answer (gate/gates/recall/fire.py calls on_prompt after its own decision). Most
projects have no prompt cues, so this module reads the cue table's prompt shard and stops there; the
selection and delivery machinery (gate/gates/delivery/anchors.py, shared with tool-call cues) is imported only when
the shard holds something.
"""

from __future__ import annotations

import time

from gate.gates.base import HookContext, Outcome, additional_context
from gate.literals import CompiledOnUse
from gate.session.ledger import Ledger
from gate.session.mute import muted_by
from gate.textproc import terms  # loaded already: the recall gate's topic check uses it

_PROMPT_WORD = CompiledOnUse(r"[\w'-]+")

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

    from gate.gates.recall.prompt import PromptText


def _keyword_match(keywords: list[str], prompt_terms: set[str], prompt_words: set[str]) -> bool:
    for phrase in keywords:
        for word in phrase.split():
            stems = terms(word)
            if stems:
                if not all(stem in prompt_terms for stem in stems):
                    return False
            elif word.lower().strip(".,;:!?\"'") not in prompt_words:
                return False
    return True


def on_prompt(ctx: HookContext, ledger: Ledger, outcome: Outcome, analysed: PromptText | None = None) -> Outcome:
    """Add keyword- and prompt-cued memories to the recall gate's answer (or answer alone when it was silent);
    `analysed`: the recall gate's analysis of the prompt, whose terms serve when they were read from the same
    text."""
    prompt = ctx.event.get("prompt")
    if not isinstance(prompt, str) or outcome.reason == "SKIP_MUTED" or muted_by(ctx.paths, ledger.muted):
        return outcome
    rules = ctx.rules("triggers")
    found = ctx.cue_table.event("prompt")
    if not found:
        return outcome
    prompt = prompt[:6000]
    prompt_terms = set(analysed.terms_of(prompt) if analysed is not None else terms(prompt))
    prompt_words = set(_PROMPT_WORD.findall(prompt.lower()))

    def holds(trigger: dict[str, Any]) -> bool:
        keywords = trigger.get("keywords") or []
        return trigger.get("event") in (None, "prompt") and (
            not keywords or _keyword_match(keywords, prompt_terms, prompt_words)
        )

    from gate.gates.delivery import anchors  # only when the project has prompt cues
    from gate.render import HARD_LIMIT_CHARS, clean

    matched, records = anchors.collect(found, holds)
    if not matched:
        return outcome
    words_seen = [word for fired in matched.values() for trigger in fired for word in trigger.get("keywords", [])]
    selection = anchors.select(records, matched, ledger, time.time())
    covered = [i for i in selection.suppressed if i in outcome.delivered]  # the recall search just delivered it
    selection.suppressed = [i for i in selection.suppressed if i not in covered]
    cue_extra = anchors.selection_extra(selection, [])
    suppressed = selection.suppressed + selection.cooling
    existing = ""
    if outcome.output is not None:
        existing = str(outcome.output.get("hookSpecificOutput", {}).get("additionalContext", ""))
    text = None
    kept: list[str] = []
    dropped: list[str] = []
    drop_reason = ""
    if selection.deliver:
        messages = anchors.messages_for(ctx, rules)
        cue = (
            messages["prompt_cue_keyword"].format(words=", ".join(clean(w, 40) for w in dict.fromkeys(words_seen)))
            if words_seen
            else messages["prompt_cue_event"]
        )
        text, kept, dropped, drop_reason = anchors.deliver(
            ctx, ledger, selection, messages["prompt_header"].format(cue=cue), rules,
            room=HARD_LIMIT_CHARS - len(existing) - 2,
        )
        cue_extra = anchors.selection_extra(selection, kept)
    cue_reason = ("FIRED_KEYWORD" if words_seen else "FIRED_PROMPT_EVENT") if text else (
        drop_reason or ("COVERED_BY_RECALL" if covered and not selection.suppressed else anchors.skip_reason(selection))
    )
    cue_extra["reason"] = cue_reason
    outcome.extra["cues"] = cue_extra
    outcome.suppressed += [i for i in suppressed if i not in outcome.suppressed]
    outcome.dropped += dropped
    if text is None:
        return outcome
    combined = f"{existing}\n\n{text}" if existing else text
    outcome.output = additional_context("UserPromptSubmit", combined)
    outcome.delivered += kept
    outcome.chars = len(combined)
    if outcome.decision != "fired":
        outcome.extra["recall"] = outcome.reason
        outcome.decision, outcome.reason, outcome.gate = "fired", cue_reason, "cues"
    return outcome


def withheld(ctx: HookContext) -> set[str]:
    """Memories outside every one of their time windows (expired, not yet due): no gate delivers them now."""
    try:
        return ctx.cue_table.withheld(time.time())
    except Exception:  # the recall gate must not fail because of the cue table
        return set()
