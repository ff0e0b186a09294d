"""Replay: the recorded hook events of a session, decided again, in process, by the code the hooks run.

Every step goes through gate.hook.decide — the one function the live hooks decide in — with a HookContext
that reads the transcript as it stood when the recorded hook ran (Step.end) and a fresh Ledger held in
memory, one per session, never saved. While a replay runs, the state directory (ledgers, audit, error log,
mute) points at a throwaway directory (gate.paths.redirect_state), so nothing it replays can touch the
user's live state; the store is only read. The index may catch up with the memory files, as any search does.
The deferred turns a session ends with reach the next session of its project (gate/session/carryover.py) on the
recorded sessions' clock (Step.stamp), so a week between two of them is a week here too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gate.gates.base import HookContext, Outcome
from gate.hook import decide
from gate.paths import ProjectPaths
from gate.replay.timeline import Step, Timeline
from gate.session.ledger import Ledger


class StepResult:
    """What the gate decided at one recorded step."""

    __slots__ = ("agent_hits", "agent_query", "decision", "delivered", "extra", "reason", "step")

    def __init__(self, step: Step, outcome: Outcome) -> None:
        self.step = step
        self.decision = outcome.decision
        self.reason = outcome.reason
        self.delivered = list(outcome.delivered)
        self.extra = outcome.extra
        # `gate replay --queries`: the agent's own search at this prompt and what it returned (None: no query)
        self.agent_query: str | None = None
        self.agent_hits: list[str] | None = None

    @property
    def event(self) -> str:
        return self.step.name

    @property
    def fired(self) -> bool:
        return self.step.name == "UserPromptSubmit" and self.decision == "fired"

    @property
    def blocked(self) -> bool:
        return self.step.name == "Stop" and self.decision == "blocked"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event": self.step.name,
            "line": self.step.line,
            "turn": self.step.turn,
            "decision": self.decision,
            "reason": self.reason,
        }
        if self.delivered:
            out["delivered"] = self.delivered
        for key in ("evidence", "evidence_quotes", "signals", "score", "terms", "novelty", "shift", "named_pairs",
                    "searched", "error", "search_asked", "search_first",
                    "agent_id", "agent_type", "spawn"):
            if key in self.extra:
                out[key] = self.extra[key]
        if self.agent_hits is not None:
            out["agent_query"], out["agent_hits"] = self.agent_query, self.agent_hits
        return out


class SessionRun:
    """One transcript, replayed."""

    __slots__ = ("results", "timeline")

    def __init__(self, timeline: Timeline, results: list[StepResult]) -> None:
        self.timeline = timeline
        self.results = results

    def of(self, event: str) -> list[StepResult]:
        return [r for r in self.results if r.step.name == event]

    def summary(self) -> dict[str, Any]:
        prompts = self.of("UserPromptSubmit")
        stops = self.of("Stop")
        delivered = [memory for r in self.results for memory in r.delivered]
        return {
            "prompts": len(prompts),
            "fires": sum(1 for r in prompts if r.fired),
            "delivered": len(delivered),
            "delivered_on_prompts": sum(len(r.delivered) for r in prompts),
            "turns_ended": len(stops),
            "blocks": sum(1 for r in stops if r.blocked),
            "failed_open": sum(1 for r in self.results if r.decision == "failed_open"),
        }


def _decide(ctx: HookContext, ledger: Ledger) -> Outcome:
    try:
        return decide(ctx, ledger)
    except Exception as error:  # the live hook fails open here: so does the replay, and it says so
        return Outcome("failed_open", "FAILED_OPEN", extra={"error": f"{type(error).__name__}: {error}"[:300]})


def replay_timeline(
    timeline: Timeline,
    paths: ProjectPaths,
    settings: dict[str, Any],
    rules_overlay: str | None = None,
    queries: dict[int, str] | None = None,
    agent_search: Callable[[ProjectPaths, str], list[str]] | None = None,
) -> SessionRun:
    """Decide every step of one session with a fresh in-memory ledger. The caller redirects the state
    directory (gate.replay.run.replay_all does). `queries`: prompt line -> the agent's query, run through
    `agent_search` against the session's store at that prompt (gate.replay.queries)."""
    from gate.session import carryover

    ledger = Ledger(session=timeline.session_id)
    results = []
    try:
        for step in timeline.steps:
            carryover.replay_now = _seconds(step.stamp)
            results.append(_replay_step(step, timeline, ledger, paths, settings, rules_overlay, queries, agent_search))
    finally:
        carryover.replay_now = None
    return SessionRun(timeline, results)


def _seconds(stamp: str) -> float | None:
    """A transcript timestamp ("2026-02-13T03:08:00.123Z") as seconds since the epoch (None: none, or unreadable)."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(stamp).timestamp() if stamp else None
    except ValueError:
        return None


def _replay_step(
    step: Step,
    timeline: Timeline,
    ledger: Ledger,
    paths: ProjectPaths,
    settings: dict[str, Any],
    rules_overlay: str | None,
    queries: dict[int, str] | None,
    agent_search: Callable[[ProjectPaths, str], list[str]] | None,
) -> StepResult:
    ctx = HookContext(
        event=step.event,
        event_name=step.name,
        session_id=timeline.session_id,
        paths=paths,
        settings=settings,
        transcript_end=step.end,
        rules_overlay=rules_overlay,
    )
    result = StepResult(step, _decide(ctx, ledger))
    if queries and agent_search is not None and step.name == "UserPromptSubmit" and step.line in queries:
        result.agent_query = queries[step.line]
        result.agent_hits = agent_search(paths, result.agent_query)
    return result
