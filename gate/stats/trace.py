"""`gate trace`: why one turn got what it got — every recall candidate with its score and disposition, the
cliff, the ledger's suppressions, supersession and scope filtering; and for the turn's Stop evaluations the
evidence found, the store decision found, and the verdict.

A turn is one prompt of a session: its UserPromptSubmit evaluation and every evaluation after it until the
next prompt (Stops, a compaction, …). Prompts are numbered from 1 in the order the audit logged them;
what came before the first prompt (SessionStart) is prompt 0."""

from __future__ import annotations

from typing import Any

from gate.errors import GateError, NotFoundError
from gate.memory.store.store import Store
from gate.paths import ProjectPaths
from gate.stats.select import Selection, ids, is_failed_open

PROMPT_EVENT = "UserPromptSubmit"
# A candidate the search admitted can still miss the context: the budget dropped it.
DROPPED = "DROPPED_OVER_BUDGET"


def session_turns(records: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A session's records split at each prompt; turns[0] holds what came before the first prompt."""
    turns: list[list[dict[str, Any]]] = [[]]
    for record in records:
        if record.get("event") == PROMPT_EVENT:
            turns.append([])
        turns[-1].append(record)
    return turns


def _selection(project: Selection | str | None) -> Selection:
    """A selection of the project: given, or one id or checkout path (a record without an id is matched by it)."""
    if isinstance(project, Selection):
        return project
    return Selection(project=project, root=project, roots=(project,)) if project else Selection()


def pick(
    records: list[dict[str, Any]], *, project: Selection | str | None, session: str | None, prompt: int | None
) -> tuple[str, int, list[list[dict[str, Any]]]]:
    """(session, prompt number, the session's turns) for the request; the last turn when no prompt is given.
    The last turn is the project's (every checkout of its repository, by the records' project id)."""
    records = [r for r in records if r.get("synthetic") is not True and not is_failed_open(r)]
    if session is None:
        selection = _selection(project)
        # (a record of no session — a project's mute, a Gemini agent's `gate remember` — names no turn to trace)
        mine = [r for r in records if selection.owns(r) and r.get("session")]
        if not mine:
            where = f"project {selection.root or selection.project}" if selection.project else "any project"
            raise NotFoundError(
                f"no evaluation of {where} in the audit log",
                hint="`gate stats` shows whether any hook ran; `--session ID` traces a session of another project",
            )
        session = str(mine[-1].get("session"))
    of_session = [r for r in records if r.get("session") == session]
    if not of_session:
        known = list(dict.fromkeys(str(r.get("session")) for r in reversed(records)))[:5]
        raise NotFoundError(
            f"no session {session!r} in the audit log",
            hint=("recent sessions: " + ", ".join(known)) if known else "the audit log is empty",
        )
    turns = session_turns(of_session)
    last = len(turns) - 1
    if prompt is None:
        prompt = last
    if not 0 <= prompt <= last:
        raise GateError(
            f"session {session} has prompts 1 to {last}" if last else f"session {session} has no prompt yet",
            hint="--prompt 0 shows what ran before the first prompt (session start)",
        )
    return session, prompt, turns


class Titles:
    """Memory titles for the trace (the audit keeps ids only); a missing memory just has no title."""

    def __init__(self, project: str | None) -> None:
        self.store = Store(ProjectPaths.for_cwd(project)) if project else None
        self.cache: dict[str, str] = {}

    def __call__(self, memory_id: str) -> str:
        if memory_id not in self.cache:
            title = ""
            if self.store is not None:
                try:
                    title = self.store.get(memory_id).title
                except Exception:  # a corrupt or vanished file must not end the trace
                    title = ""
            self.cache[memory_id] = title
        return self.cache[memory_id]


def _recall(record: dict[str, Any], title: Titles) -> dict[str, Any]:
    trace = record.get("trace") if isinstance(record.get("trace"), dict) else None
    delivered = ids(record.get("delivered"))
    dropped = set(ids(record.get("dropped")))
    data: dict[str, Any] = {
        "novelty": record.get("novelty"),
        "terms": record.get("terms", []),
        "delivered": [{"id": i, "title": title(i)} for i in delivered],
        "suppressed": ids(record.get("suppressed")),
        "dropped": sorted(dropped),
        "chars": record.get("chars", 0),
    }
    if trace is None:
        data["search"] = None  # the gate decided before searching (trivial prompt, no shift, …)
        return data
    if trace.get("truncated"):
        data["search"] = {"truncated": True}
        return data
    candidates = []
    for candidate in trace.get("candidates", []):
        if not isinstance(candidate, dict):
            continue
        memory_id = str(candidate.get("id"))
        disposition = str(candidate.get("disposition"))
        if disposition == "ADMITTED" and memory_id in dropped:
            disposition = DROPPED
        item = {
            "id": memory_id,
            "title": title(memory_id),
            "score": candidate.get("score"),
            "disposition": disposition,
        }
        if candidate.get("detail"):
            item["detail"] = candidate["detail"]
        if isinstance(candidate.get("z"), int | float):
            item["z"] = candidate["z"]
        candidates.append(item)
    data["search"] = {
        "terms": trace.get("terms", []),
        "top_score": trace.get("top_score"),
        "cliff": trace.get("cliff"),
        "candidates": candidates,
    }
    if isinstance(trace.get("std"), int | float):  # the recall gate's z floor (issue 21)
        data["search"]["mean"], data["search"]["std"] = trace.get("mean"), trace["std"]
    related = record.get("related")
    if isinstance(related, list):
        data["related"] = [
            {**r, "title": title(str(r.get("id"))), "delivered": r.get("id") in delivered}
            for r in related
            if isinstance(r, dict)
        ]
    return data


def _stop(record: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "evidence": record.get("evidence", []),
        "evidence_quotes": record.get("evidence_quotes", []),
        "signals": record.get("signals", {}),
        "score": record.get("score"),
        "store_decision": record.get("store_decision"),
        "store_detail": record.get("store_detail"),
    }
    if "blocks" in record:
        data["block_number"] = record["blocks"]
    if isinstance(record.get("fix_guard"), dict):
        data["fix_guard"] = record["fix_guard"]
    if record.get("subagent_report"):
        data["subagent_report"] = True
    if record.get("outcome") is not None:
        data["previous_block_outcome"] = record["outcome"]
    return data


def evaluation(record: dict[str, Any], title: Titles) -> dict[str, Any]:
    data: dict[str, Any] = {
        key: record.get(key) for key in ("ts", "event", "gate", "decision", "reason", "latency_ms")
    }
    event = record.get("event")
    for key in ("agent_id", "agent_type", "spawn"):  # a decision made for a subagent (gate/gates/recall/subagent.py)
        if record.get(key):
            data[key] = record[key]
    if event == PROMPT_EVENT or record.get("spawn"):  # a spawn searches for its task as recall does for a prompt
        data["recall"] = _recall(record, title)
    elif event == "Stop":
        data["stop"] = _stop(record)
    else:
        delivered = ids(record.get("delivered"))
        if delivered:
            data["delivered"] = [{"id": i, "title": title(i)} for i in delivered]
        for key in ("source", "trigger", "chars", "query", "search_first"):  # query: the agent's own search
            if key in record:
                data[key] = record[key]
        opened = ids(record.get("opened"))
        if opened:
            data["opened"] = [{"id": i, "title": title(i)} for i in opened]
    return data


def build_trace(
    records: list[dict[str, Any]], *, project: Selection | str | None, session: str | None, prompt: int | None
) -> dict[str, Any]:
    session, number, turns = pick(records, project=project, session=session, prompt=prompt)
    selection = _selection(project)
    turn = turns[number]
    # titles from the checkout asked from when the turn is its project's (another checkout may be gone or moved)
    ours = bool(turn) and selection.project is not None and selection.owns(turn[0])
    project_id = (turn[0].get("project_id") or (selection.project if ours else None)) if turn else selection.project
    where = selection.root if ours or not turn else str(turn[0].get("project") or selection.root or "")
    title = Titles(where or None)
    return {
        "session": session,
        "project": turn[0].get("project") if turn else selection.root,
        "project_id": project_id,
        "prompt": number,
        "prompts": len(turns) - 1,
        "evaluations": [evaluation(record, title) for record in turn],
    }


# ---------------------------------------------------------------------------------------------------------------
# text


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# Why a recall evaluation did not search, and what a Stop verdict means, in the reader's words.
NO_SEARCH = {
    "SKIP_NO_PROMPT": "the event carried no prompt",
    "SKIP_MUTED": "the gate is muted or off",
    "SKIP_TRIVIAL_PROMPT": "a trivial prompt (an acknowledgement) has no topic",
    "SKIP_NO_SHIFT": "the prompt continues the current topic",
    "SKIP_SCRIPTED_PROMPT": "the project sent this prompt word for word before: a program's, not a request",
    "SKIP_NO_INDEX": "there is no index to search yet",
}
STOP_VERDICTS = {
    "BLOCKED_WRITEBACK": "evidence and no store decision: the turn must decide about memory",
    "ALLOW_ALREADY_STORED": "the turn already decided about memory (evidence is not examined then)",
    "ALLOW_NO_SIGNAL": "no evidence that the turn decided, fixed or learned anything",
    "ALLOW_BELOW_THRESHOLD": "some evidence, but its score stays below the threshold (rules/writeback.toml [score])",
    "ALLOW_ASKS_USER": "the reply ends by asking the user to choose or answer: the turn waits on them",
    "ALLOW_EXPLANATION_ONLY": "an answer from knowledge alone, no tool used",
    "ALLOW_WROTE_NOTES": "the turn wrote the lesson itself into a notes place (CLAUDE.md, a memory file, …)",
    "ALLOW_MACHINE_PROMPT": "the prompt came from a program (a task notification), not a person",
    "ALLOW_DEFERRED_SAME_FIX": "the fix of a debugging loop that blocked once already: a reminder at the next prompt",
    "ALLOW_CAPPED": "evidence, but the session reached its block cap",
    "ALLOW_STOP_ACTIVE": "the continuation after a block: never blocked twice (evidence is not examined)",
    "ALLOW_DISABLED": "the write-back gate is muted or off",
}


def _render_recall(data: dict[str, Any], reason: str, lines: list[str]) -> None:
    search = data["search"]
    if data.get("novelty") is not None:
        lines[-1] += f" · novelty {data['novelty']}"
    if data.get("terms"):
        lines.append(f"  prompt terms: {', '.join(str(t) for t in data['terms'])}")
    if search is None:
        lines.append(f"  no search: {NO_SEARCH.get(reason, 'the gate decided before searching')}")
        return
    if search.get("truncated"):
        lines.append("  the candidate list was too large to keep in the audit")
        return
    spread = (f"scores standardised over the store: mean {search['mean']}, sd {search['std']} (a z under the "
              "floor: BELOW_Z)" if "std" in search else f"cliff {search['cliff']} (below it: BELOW_CLIFF)")
    lines.append(
        f"  searched for: {', '.join(search['terms']) or '–'} · top score {search['top_score']} · {spread}"
    )
    if not search["candidates"]:
        lines.append("  no candidate matched")
    final = {c["id"]: c["disposition"] for c in search["candidates"]}
    for candidate in search["candidates"]:
        detail = candidate.get("detail", "")
        if candidate["disposition"] == "SUPERSEDED_SUCCESSOR_AVAILABLE":
            detail = f"→ successor {detail}" + (f" ({final[detail]})" if detail in final else "")
        elif candidate["disposition"] == "OTHER_PROJECT":
            detail = f"(belongs to {detail})"
        score = candidate["score"]
        shown = f"{score:.2f}" if isinstance(score, int | float) else "–"
        if isinstance(candidate.get("z"), int | float):
            detail = f"z {candidate['z']:.2f}" + (f" {detail}" if detail else "")
        lines.append(
            f"  {shown:>7}  {candidate['disposition']:<31} {candidate['id']:<14} "
            f"{_short(candidate['title'] or '', 60)}{'  ' + detail if detail else ''}"
        )
    for related in data.get("related", []):
        state = "delivered" if related.get("delivered") else "not delivered"
        lines.append(f"  related: {related.get('id')} ({related.get('edge')} {related.get('from')}) — {state}")
    delivered = ", ".join(d["id"] for d in data["delivered"]) or "nothing"
    lines.append(
        f"  delivered: {delivered} ({data['chars']} chars) · suppressed by the ledger (already delivered): "
        f"{', '.join(data['suppressed']) or 'none'} · dropped at the budget: {', '.join(data['dropped']) or 'none'}"
    )


def _render_stop(data: dict[str, Any], reason: str, lines: list[str]) -> None:
    lines.append(f"  verdict: {STOP_VERDICTS.get(reason, reason)}")
    if data.get("previous_block_outcome"):
        lines.append(f"  outcome of the previous block: {data['previous_block_outcome']}")
    if data["store_decision"]:
        detail = f" — {_short(str(data['store_detail']), 120)}" if data.get("store_detail") else ""
        lines.append(f"  store decision found: {data['store_decision']}{detail}")
    if data["evidence"]:
        lines.append(f"  evidence found: {', '.join(data['evidence'])}")
        lines += [f"    \"{quote}\"" for quote in data["evidence_quotes"]]
    elif reason in ("BLOCKED_WRITEBACK", "ALLOW_NO_SIGNAL", "ALLOW_CAPPED"):
        lines.append("  evidence found: none")
    if data.get("signals"):
        signals = ", ".join(f"{name}={value:g}" for name, value in sorted(data["signals"].items()))
        lines.append(f"  score {data['score']} from: {signals}")
    if data.get("subagent_report"):
        lines.append("  weighed on a background subagent's report (its task notification is no prompt of the user's)")
    guard = data.get("fix_guard")
    if guard:
        shared = ", ".join(str(x) for x in guard.get("shared", []))
        lines.append(f"  the same fix as turn {guard.get('of')} (its {guard.get('by')}: {shared})")
    if "block_number" in data:
        lines.append(f"  block {data['block_number']} of this session")


def _subagent_label(item: dict[str, Any]) -> str:
    """Decisions made for a subagent stand apart from the main conversation's."""
    kind = item.get("agent_type") or "subagent"
    if item.get("spawn"):
        return f" · [spawn: a {kind} subagent's task]"
    if item.get("agent_id"):
        return f" · [inside subagent {item['agent_id']} ({kind})]"
    return ""


def render_text(trace: dict[str, Any]) -> str:
    label = f"prompt {trace['prompt']} of {trace['prompts']}" if trace["prompt"] else "before the first prompt"
    lines = [f"gate trace — session {trace['session']}, {label} · {trace['project']}"]
    if not trace["evaluations"]:
        lines.append("  no evaluation")
    for item in trace["evaluations"]:
        lines.append("")
        took = f" · {item['latency_ms']} ms" if item.get("latency_ms") is not None else ""  # a hook's, not a command's
        head = f"{item['ts']} {item['event']} → {item['decision']} {item['reason']}"
        lines.append(head + took + _subagent_label(item))
        if item.get("query"):
            lines.append(f"  the agent searched: {_short(str(item['query']), 70)}")
        if item.get("search_first"):
            lines.append(f"  the search asked of the agent: {item['search_first']}")
        if "recall" in item:
            _render_recall(item["recall"], str(item["reason"]), lines)
        elif "stop" in item:
            _render_stop(item["stop"], str(item["reason"]), lines)
        else:
            for delivered in item.get("delivered", []):
                lines.append(f"  delivered: {delivered['id']} {_short(delivered['title'], 70)}")
            for opened in item.get("opened", []):
                lines.append(f"  opened: {opened['id']} {_short(opened['title'], 70)}")
    return "\n".join(lines)
