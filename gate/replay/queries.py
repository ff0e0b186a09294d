"""Agent-written queries for `gate replay --labels … --queries FILE`: what the agent's own search would have
put in front of it, scored beside the recall gate's hits (issue 29, "Score agent-written queries").

FILE is JSON lines, one per prompt, as a model playing the agent wrote them from what the agent sees at that
prompt (scripts/corpus/query_sheets.py writes the sheets), frozen before scoring:

  {"transcript": T, "prompt": LINE, "query": "words the agent would search for"}

T resolves as a label's does (against --root, else FILE's directory); LINE is the prompt's 1-based line. An
empty query is a prompt where the agent would not search. Blank lines are skipped, unknown keys ignored; given
more than once (or several files), a later line for the same prompt wins.

At each prompt with a query the replay runs plain `gate search`'s ranking — gate.memory.search.search with
the rules `gate search` loads, against the replay's store as it is at that prompt — and keeps its first
AGENT_TOP hits (with `--rules DIR`, DIR's search.toml applies to it as to the hooks). They count as delivered
from that prompt on, in that context window (a compaction empties it), as every delivery is counted.
Scored side by side, over the labelled prompts:
- the hook: what the gates delivered (in full or as an index line) — the delivery figures of labels.score;
- the agent's queries alone: what its searches returned, at this prompt or earlier in the window;
- both: either of them;
- asked: the hook, with the agent's search only at the prompts where the recall gate asked for one
  (gate/gates/recall/search_first.py) — what a user of the gate gets, where "both" assumes a search at every
  prompt. `asks` counts the prompts asked, of all replayed prompts: each ask costs the agent one search.
For each: delivery (expected memories that had reached the agent by the prompt), delivered at a prompt (by the
recall gate's injection or by a search: what the prompt itself brought), precision of what was put in front
of the agent at the prompt (the hook's injection, the search's hits, their union; a hit counts each time a
search shows it), and noise (what was put in front of it at prompts that should get none).
"""

from __future__ import annotations

import os
from typing import Any

from gate.errors import ValidationError
from gate.paths import ProjectPaths
from gate.replay.engine import SessionRun
from gate.replay.labels import Labels, _line_number, _ratio, _resolve, json_objects

AGENT_TOP = 3  # the agent reads the first three hits of its search

Queries = dict[tuple[str, int], str]  # (transcript, prompt line) -> the agent's query


def load_queries(path: str, root: str | None = None) -> Queries:
    """Parse a queries file; any bad line is an error naming the file and line (nothing is run)."""
    base = os.path.abspath(root) if root else os.path.dirname(os.path.abspath(path))
    queries: Queries = {}
    for where, item in json_objects(path, "a query line", "queries"):
        transcript = _resolve(base, item.get("transcript"), where, "transcript")
        prompt = _line_number(item.get("prompt"), where, "prompt")
        query = item.get("query")
        if not isinstance(query, str):
            raise ValidationError(f"{where}: query must be a string (\"\" where the agent would not search)")
        queries[(transcript, prompt)] = query.strip()
    return queries


def merged_queries(parts: list[Queries]) -> Queries:
    out: Queries = {}
    for part in parts:
        out.update(part)
    return out


class AgentSearch:
    """Plain `gate search` (what the CLI command runs) against one replayed store, first AGENT_TOP hits."""

    def __init__(self, rules_overlay: str | None = None) -> None:
        self.rules_overlay = rules_overlay
        self._stores: dict[str, Any] = {}  # project root -> (Store, search rules)

    def __call__(self, paths: ProjectPaths, query: str) -> list[str]:
        from gate.memory.search import search
        from gate.memory.store.store import Store
        from gate.rules import load_rules

        opened = self._stores.get(paths.root)
        if opened is None:
            store = Store(paths)
            store.catch_up()  # as `gate search` opens its store
            opened = self._stores[paths.root] = (store, load_rules("search", paths.root, self.rules_overlay))
        store, rules = opened
        if not query:
            return []
        result = search(store.index, query, limit=AGENT_TOP, rules=rules)
        return [hit.id for hit in result.hits[:AGENT_TOP]]


# Each session's "asked" counts, in this order, in score_queries()'s "by_session".
ASKED_SESSION_KEYS = ("expected", "reached_at_prompt", "shown", "shown_relevant", "noise")


class _Tally:
    def __init__(self) -> None:
        self.expected = self.reached = self.reached_at_prompt = 0
        self.shown = self.shown_relevant = self.noise = self.noise_prompts = 0

    def add(self, expected: list[str], reached: set[str], at_prompt: set[str], shown: list[str]) -> None:
        self.expected += len(expected)
        self.reached += sum(1 for m in expected if m in reached)
        self.reached_at_prompt += sum(1 for m in expected if m in at_prompt)
        self.shown += len(shown)
        self.shown_relevant += sum(1 for m in shown if m in expected)
        if not expected and shown:
            self.noise += len(shown)
            self.noise_prompts += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "expected": self.expected, "reached": self.reached, "reached_at_prompt": self.reached_at_prompt,
            "shown": self.shown, "shown_relevant": self.shown_relevant,
            "noise": self.noise, "noise_prompts": self.noise_prompts,
            "recall": _ratio(self.reached, self.expected),
            "recall_at_prompt": _ratio(self.reached_at_prompt, self.expected),
            "precision": _ratio(self.shown_relevant, self.shown),
        }


def score_queries(labels: Labels, runs: dict[str, SessionRun], queries: Queries) -> dict[str, Any]:
    """The hook, the agent's queries and both, side by side over the labelled prompts (see the module doc)."""
    hook, agent, both, asked = _Tally(), _Tally(), _Tally(), _Tally()
    labelled = with_query = empty = prompts = asks = 0
    cases: list[dict[str, Any]] = []
    replayed: set[tuple[str, int]] = set()
    by_session: dict[str, dict[str, Any]] = {}  # each session's asks and asked figures (fitting by owner, intervals)
    for transcript, run in runs.items():
        session_asked = _Tally()
        session_asks = session_prompts = 0
        window: set[str] = set()  # in full, by any gate, in this context window
        listed: set[str] = set()  # as a session-start index line
        at_prompts: set[str] = set()  # injected at a prompt
        searched: set[str] = set()  # returned by the agent's searches
        searched_asked: set[str] = set()  # ... by those the recall gate asked for
        for result in run.results:
            step = result.step
            if step.name == "SessionStart" and step.event.get("source") == "compact":
                window, listed, at_prompts, searched, searched_asked = set(), set(), set(), set(), set()
            if result.extra.get("spawn") or result.extra.get("agent_id"):
                continue  # a subagent's context, not this one
            window.update(result.delivered)
            listed.update(m for m in result.extra.get("indexed", []) if isinstance(m, str))
            if step.name != "UserPromptSubmit":
                continue
            at_prompts.update(result.delivered)
            key = (transcript, step.line)
            replayed.add(key)
            hits = result.agent_hits or []
            searched.update(hits)
            was_asked = bool(result.extra.get("search_asked"))
            prompts += 1
            asks += was_asked
            session_prompts += 1
            session_asks += was_asked
            hits_asked = hits if was_asked else []
            searched_asked.update(hits_asked)
            expected = labels.memories.get(key)
            if expected is None:
                continue
            labelled += 1
            if result.agent_hits is not None:
                with_query += 1
                empty += not queries.get(key)
            hook.add(expected, window | listed, at_prompts, result.delivered)
            agent.add(expected, searched, searched, hits)
            both.add(expected, window | listed | searched, at_prompts | searched,
                     sorted(set(result.delivered) | set(hits)))
            for tally in (asked, session_asked):
                tally.add(expected, window | listed | searched_asked, at_prompts | searched_asked,
                          sorted(set(result.delivered) | set(hits_asked)))
            if result.agent_hits is not None:
                cases.append({
                    "transcript": transcript, "line": step.line, "query": queries.get(key, ""), "hits": hits,
                    "relevant": [m for m in hits if m in expected],
                    "missed": [m for m in expected if m not in searched],
                })
        by_session[transcript] = {"asks": session_asks, "prompts": session_prompts,
                                  "asked": [session_asked.expected, session_asked.reached_at_prompt,
                                            session_asked.shown, session_asked.shown_relevant, session_asked.noise]}
    return {
        "top": AGENT_TOP,
        "labelled_prompts": labelled,
        "with_query": with_query,
        "empty_queries": empty,
        "without_query": labelled - with_query,
        "hook": hook.to_json(),
        "agent": agent.to_json(),
        "both": both.to_json(),
        "asked": asked.to_json(),
        "asks": asks,
        "prompts_replayed": prompts,
        "prompts": cases,
        "unmatched": [f"{t}#{line}" for (t, line) in queries if (t, line) not in replayed],
        # per session: asks, prompts replayed, and the "asked" figures in the order ASKED_SESSION_KEYS
        "by_session": by_session,
    }
