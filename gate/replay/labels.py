"""Labels for `gate replay --labels FILE`: what each gate should have done, and how far it did.

FILE is JSON lines; blank lines are skipped, unknown keys ignored (keep an annotator's confidence there).
Transcript paths are relative to `--root DIR`, else to FILE's directory. Four kinds of line:

  {"transcript": T, "prompt": LINE, "shift": true}             recall: should this prompt search memory?
  {"transcript": T, "prompt": LINE, "memories": ["m-…", …]}    recall: what should be in front of the agent
  {"transcript": T, "turn": LINE, "block": true, "kind": "fix"} write-back: should the turn's Stop block?
  {"store": FILE.jsonl, "transcripts": [T, …]}                  replay these against a throwaway store

LINE is the 1-based line of the prompt in the transcript (for "turn": the prompt that opened the turn, 0 for
what a transcript holds before its first prompt; the turn's first Stop is the one judged). "shift" and
"memories" may share a line. A store line makes those transcripts replay against a store built from FILE
(`gate export` JSON lines), holding only the memories created before the session's first timestamp: the
memories of its project's earlier sessions. Without store lines, the current store is used.

Scores: the recall gate's shift precision/recall (predicted: the gate searched memory for the prompt); delivery
recall (expected memories that had reached the agent in this context window by that prompt, whoever delivered
them, in full or as a line of the session-start index), over all labelled prompts and over shifting prompts,
and apart: delivered in full at a prompt (prompt-time), in full at session start, as an index line only; and
per language (Chinese sessions apart); precision of what the recall gate injected at a
labelled prompt (relevant there?); noise (memories injected at prompts that should get none); cross-project
leaks (a memory delivered that is not in the session's own store); write-back precision/recall of the blocks
alone, and as the user feels them: blocks and reminders apart (a reminder is the next prompt's MEMORY CHECK
for a turn the Stop deferred), recall of blocked-or-reminded, false blocks as a share of ordinary turns,
blocks and reminders per 100 turns, and the sessions of 10 turns or more that saw a false block.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from gate.errors import ValidationError
from gate.replay.engine import SessionRun, StepResult

KINDS = ("decision", "fix", "gotcha", "learning", "preference")


class Labels:
    def __init__(self) -> None:
        self.shift: dict[tuple[str, int], bool] = {}
        self.memories: dict[tuple[str, int], list[str]] = {}
        self.block: dict[tuple[str, int], tuple[bool, str]] = {}
        self.stores: dict[str, str] = {}  # transcript -> store file
        self.transcripts: list[str] = []  # every transcript named, first mention first

    def _note(self, transcript: str) -> None:
        if transcript not in self.transcripts:
            self.transcripts.append(transcript)


def merged(parts: list[Labels]) -> Labels:
    """Several label files as one (`--labels` given more than once): a later file's answer for a case wins."""
    out = Labels()
    for part in parts:
        out.shift.update(part.shift)
        out.memories.update(part.memories)
        out.block.update(part.block)
        out.stores.update(part.stores)
        for transcript in part.transcripts:
            out._note(transcript)
    return out


def _resolve(base: str, path: Any, where: str, field: str) -> str:
    if not isinstance(path, str) or not path:
        raise ValidationError(f"{where}: {field} must be a path (a non-empty string)")
    return os.path.normpath(os.path.join(base, path))


def _line_number(value: Any, where: str, field: str, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValidationError(f"{where}: {field} must be a line number ({least} or more)")
    return value


def json_objects(path: str, one: str, many: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each non-blank line of a JSON-lines file as (where, object); a line that is not a JSON object, or a file
    that cannot be read, is an error naming the file and line. `one`, `many`: what a line holds, for messages."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ValidationError(f"cannot read {many} {path}: {error}") from error
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}, line {number}"
        try:
            item = json.loads(line)
        except ValueError as error:
            raise ValidationError(f"{where}: not JSON ({error})") from error
        if not isinstance(item, dict):
            raise ValidationError(f"{where}: {one} must be a JSON object")
        yield where, item


def load_labels(path: str, root: str | None = None) -> Labels:
    """Parse a labels file; any bad line is an error naming the file and line (nothing is run)."""
    here = os.path.dirname(os.path.abspath(path))
    base = os.path.abspath(root) if root else here
    labels = Labels()
    for where, item in json_objects(path, "a label", "labels"):
        if "store" in item:
            store = _resolve(here, item["store"], where, "store")
            transcripts = item.get("transcripts")
            if not isinstance(transcripts, list) or not transcripts:
                raise ValidationError(f"{where}: a store line needs \"transcripts\": [paths]")
            for transcript in transcripts:
                resolved = _resolve(base, transcript, where, "transcripts")
                labels.stores[resolved] = store
                labels._note(resolved)
            continue
        transcript = _resolve(base, item.get("transcript"), where, "transcript")
        labels._note(transcript)
        if "prompt" in item:
            key = (transcript, _line_number(item["prompt"], where, "prompt"))
            if "shift" not in item and "memories" not in item:
                raise ValidationError(f"{where}: a prompt label needs \"shift\" or \"memories\"")
            if "shift" in item:
                if not isinstance(item["shift"], bool):
                    raise ValidationError(f"{where}: shift must be true or false")
                labels.shift[key] = item["shift"]
            if "memories" in item:
                memories = item["memories"]
                if not isinstance(memories, list) or not all(isinstance(m, str) for m in memories):
                    raise ValidationError(f"{where}: memories must be a list of memory ids")
                labels.memories[key] = memories
        elif "turn" in item:
            key = (transcript, _line_number(item["turn"], where, "turn", least=0))
            if not isinstance(item.get("block"), bool):
                raise ValidationError(f"{where}: a turn label needs \"block\": true or false")
            kind = item.get("kind", "")
            if kind not in ("", "none", *KINDS):
                raise ValidationError(f"{where}: kind must be one of {', '.join(KINDS)}")
            labels.block[key] = (item["block"], "" if kind == "none" else kind)
        else:
            raise ValidationError(f"{where}: a label needs \"prompt\", \"turn\" or \"store\"")
    return labels


# ---------------------------------------------------------------------------------------------------------
# scoring


class Confusion:
    def __init__(self) -> None:
        self.tp = self.fp = self.fn = self.tn = 0

    def add(self, expected: bool, predicted: bool) -> None:
        if expected and predicted:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif expected:
            self.fn += 1
        else:
            self.tn += 1

    def to_json(self) -> dict[str, Any]:
        n = self.tp + self.fp + self.fn + self.tn
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else None
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else None
        return {"n": n, "tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn,
                "precision": _round(precision), "recall": _round(recall)}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _ratio(part: int, whole: int) -> float | None:
    return _round(part / whole) if whole else None


def searched(result: StepResult) -> bool:
    """Did the recall gate look in memory for this prompt? (a shift, or memory worth a look)"""
    return bool(result.extra.get("shift")) or result.decision == "fired"


def _language(run: SessionRun) -> str:
    """"zh" for a session most of whose prompts are written in Chinese (or Japanese) characters, else "other":
    delivery is reported apart for them (their text is searched by character pairs)."""
    prompts = [str(r.step.event.get("prompt") or "") for r in run.results if r.step.name == "UserPromptSubmit"]
    unspaced = sum(1 for p in prompts if any("\u3040" <= c <= "\u9fff" for c in p[:400]))
    return "zh" if prompts and unspaced * 2 >= len(prompts) else "other"


def _excerpt(text: str, width: int = 100) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _matched(
    expected: dict[tuple[str, int], Any], transcript: str, found: dict[int, StepResult], what: str,
    unmatched: list[str],
) -> Iterator[tuple[str, int, Any, StepResult]]:
    """(path, line, expected answer, the step's result) for this transcript's labels; the ones no replayed step
    answers are listed in `unmatched`."""
    for (path, line), answer in expected.items():
        if path != transcript:
            continue
        result = found.get(line)
        if result is None:
            unmatched.append(f"{path}#{line} ({what})")
            continue
        yield path, line, answer, result


def _carried(runs: dict[str, SessionRun]) -> set[tuple[str, Any]]:
    """(session, deferred turn) of every turn a session ended with still deferred that the start of the project's
    next session reminded of (gate/session/carryover.py)."""
    out: set[tuple[str, Any]] = set()
    for run in runs.values():
        for result in run.results:
            if result.step.name == "SessionStart":
                for pair in result.extra.get("carried_turns", []):
                    if isinstance(pair, list) and len(pair) == 2:
                        out.add((str(pair[0]), pair[1]))
    return out


# Each session's delivery counts, in this order, in score()'s "by_session" (scripts/quality.py's intervals).
SESSION_DELIVERY_KEYS = ("expected", "reached", "reached_prompt_time", "injected", "injected_relevant")
LONG_SESSION_TURNS = 10  # "sessions of 10 turns or more that see a false block"


class _Writeback:
    """The write-back figures beyond the blocks' confusion: reminders, and false blocks per session."""

    def __init__(self) -> None:
        self.reminded = Confusion()  # reminded at the next prompt (turns not blocked)
        self.either = Confusion()  # blocked, or reminded at the next prompt
        self.deferred_unreminded = 0  # deferred by the Stop, no reminder followed (withdrawn, capped, session over)
        self.reminded_next_session = 0  # of the reminded: at the start of the project's next session (carried)
        self.sessions = self.long_sessions = self.sessions_false = self.long_sessions_false = 0

    def session(self, turn_ends: int, false_blocks: int) -> None:
        self.sessions += 1
        self.sessions_false += bool(false_blocks)
        if turn_ends >= LONG_SESSION_TURNS:
            self.long_sessions += 1
            self.long_sessions_false += bool(false_blocks)

    def to_json(self, block: Confusion) -> dict[str, Any]:
        n = block.tp + block.fp + block.fn + block.tn
        ordinary = block.fp + block.tn

        def per_100(count: int) -> float | None:
            return round(100 * count / n, 1) if n else None

        return {
            "false_block_rate": _ratio(block.fp, ordinary),
            "blocks_per_100_turns": per_100(block.tp + block.fp),
            "reminders_per_100_turns": per_100(self.reminded.tp + self.reminded.fp),
            "reminders_on_ordinary_per_100_turns": per_100(self.reminded.fp),
            "recall_blocked_or_reminded": self.either.to_json()["recall"],
            "reminded": self.reminded.to_json(),
            "blocked_or_reminded": self.either.to_json(),
            "deferred_not_reminded": self.deferred_unreminded,
            "reminded_at_next_session": self.reminded_next_session,
            "sessions": self.sessions,
            "sessions_with_false_block": self.sessions_false,
            "long_sessions": self.long_sessions,
            "long_sessions_with_false_block": self.long_sessions_false,
        }


def score(labels: Labels, runs: dict[str, SessionRun], store_ids: dict[str, set[str]] | None = None) -> dict[str, Any]:
    """Precision and recall per gate, with every wrong case. `store_ids`: each transcript's own memories."""
    shift, block, verdict = Confusion(), Confusion(), Confusion()
    writeback = _Writeback()
    wrong_remind: list[dict[str, Any]] = []
    by_kind: dict[str, Confusion] = {}
    wrong_shift: list[dict[str, Any]] = []
    wrong_block: list[dict[str, Any]] = []
    delivery = {"expected": 0, "reached": 0, "expected_at_shifts": 0, "reached_at_shifts": 0, "injected": 0,
                "injected_relevant": 0, "noise": 0, "noise_prompts": 0, "leaks": 0,
                "reached_prompt_time": 0, "reached_session_start": 0, "reached_index_only": 0, "reached_in_full": 0,
                "indexed": 0}
    by_language: dict[str, dict[str, int]] = {}
    missed: list[dict[str, Any]] = []
    irrelevant: list[dict[str, Any]] = []
    leaked: list[dict[str, Any]] = []
    unmatched: list[str] = []
    carried = _carried(runs)
    by_session: dict[str, dict[str, list[int]]] = {}  # each session's share of the counts (the intervals' resampling)

    def counts() -> dict[str, list[int]]:
        return {"block": [block.tp, block.fp, block.fn, block.tn],
                "either": [writeback.either.tp, writeback.either.fp, writeback.either.fn, writeback.either.tn],
                "shift": [shift.tp, shift.fp, shift.fn, shift.tn],
                "delivery": [delivery[k] for k in SESSION_DELIVERY_KEYS]}

    for transcript, run in runs.items():
        before = counts()
        own = store_ids.get(transcript) if store_ids else None
        language = _language(run)
        lang = by_language.setdefault(language, {"expected": 0, "reached": 0, "reached_prompt_time": 0,
                                                 "injected": 0, "injected_relevant": 0, "noise": 0})
        window: set[str] = set()  # delivered in full in this context window, by any gate
        at_prompts: set[str] = set()  # of those, by the recall gate and the prompt cues (at a prompt)
        at_start: set[str] = set()  # in full at session start
        listed: set[str] = set()  # as an index line at session start
        first_stop: dict[int, StepResult] = {}
        prompts: dict[int, StepResult] = {}
        reminded: set[Any] = set()  # the deferred turns (their Stop's "deferred" id) a prompt reminded of
        for result in run.results:
            step = result.step
            if step.name == "SessionStart" and step.event.get("source") == "compact":
                window, at_prompts, at_start, listed = set(), set(), set(), set()
            indexed = [m for m in result.extra.get("indexed", []) if isinstance(m, str)]
            if not (result.extra.get("spawn") or result.extra.get("agent_id")):
                window.update(result.delivered)  # (what a subagent was given is in its context, not this one)
                listed.update(indexed)
                delivery["indexed"] += len(indexed)
                if step.name == "UserPromptSubmit":
                    at_prompts.update(result.delivered)
                elif step.name == "SessionStart":
                    at_start.update(result.delivered)
            if own is not None:
                for memory in [*result.delivered, *indexed]:
                    if memory not in own:
                        delivery["leaks"] += 1
                        leaked.append({"transcript": transcript, "line": step.line, "memory": memory})
            if step.name == "UserPromptSubmit":
                prompts[step.line] = result
                if result.extra.get("reminder_of") is not None:
                    reminded.add(result.extra["reminder_of"])
                key = (transcript, step.line)
                expected = labels.memories.get(key)
                if expected is not None:
                    at_shift = labels.shift.get(key, searched(result))
                    reached = [m for m in expected if m in window or m in listed]
                    delivery["expected"] += len(expected)
                    delivery["reached"] += len(reached)
                    delivery["reached_prompt_time"] += sum(1 for m in expected if m in at_prompts)
                    delivery["reached_in_full"] += sum(1 for m in expected if m in window)
                    delivery["reached_session_start"] += sum(1 for m in expected if m in at_start)
                    delivery["reached_index_only"] += sum(1 for m in expected if m in listed and m not in window)
                    lang["expected"] += len(expected)
                    lang["reached"] += len(reached)
                    lang["reached_prompt_time"] += sum(1 for m in expected if m in at_prompts)
                    lang["injected"] += len(result.delivered)
                    lang["injected_relevant"] += sum(1 for m in result.delivered if m in expected)
                    if not expected:
                        lang["noise"] += len(result.delivered)
                    if at_shift:
                        delivery["expected_at_shifts"] += len(expected)
                        delivery["reached_at_shifts"] += len(reached)
                    for memory in expected:
                        if memory not in window and memory not in listed:
                            missed.append({"transcript": transcript, "line": step.line, "memory": memory,
                                           "reason": result.reason})
                    delivery["injected"] += len(result.delivered)
                    relevant = [m for m in result.delivered if m in expected]
                    delivery["injected_relevant"] += len(relevant)
                    for memory in result.delivered:
                        if memory not in expected:
                            irrelevant.append({"transcript": transcript, "line": step.line, "memory": memory})
                    if not expected and result.delivered:
                        delivery["noise"] += len(result.delivered)
                        delivery["noise_prompts"] += 1
            elif step.name == "Stop":
                first_stop.setdefault(step.turn, result)
        for path, line, expected_shift, result in _matched(labels.shift, transcript, prompts, "prompt", unmatched):
            predicted = searched(result)
            shift.add(expected_shift, predicted)
            verdict.add(expected_shift, bool(result.extra.get("shift")))
            if predicted != expected_shift:
                wrong_shift.append({
                    "transcript": path, "line": line, "expected": expected_shift, "got": predicted,
                    "reason": result.reason, "novelty": result.extra.get("novelty"),
                    "terms": result.extra.get("terms"), "prompt": _excerpt(result.step.event.get("prompt", "")),
                })
        false_blocks = 0
        for path, line, (expected_block, kind), result in _matched(labels.block, transcript, first_stop, "turn",
                                                                   unmatched):
            blocked = result.blocked
            block.add(expected_block, blocked)
            false_blocks += blocked and not expected_block
            deferred = result.extra.get("deferred")
            at_next_session = deferred is not None and (run.timeline.session_id, deferred) in carried
            was_reminded = not blocked and deferred is not None and (deferred in reminded or at_next_session)
            writeback.reminded_next_session += was_reminded and deferred not in reminded
            writeback.deferred_unreminded += deferred is not None and not was_reminded
            if not blocked:
                writeback.reminded.add(expected_block, was_reminded)
            writeback.either.add(expected_block, blocked or was_reminded)
            if was_reminded and not expected_block:
                wrong_remind.append({
                    "transcript": path, "turn": line, "reason": result.reason,
                    "evidence": result.extra.get("evidence", []), "score": result.extra.get("score"),
                    "signals": result.extra.get("signals", {}), "quotes": result.extra.get("evidence_quotes", []),
                    "reply": _excerpt(result.step.event.get("last_assistant_message", ""), 140),
                })
            if kind:
                by_kind.setdefault(kind, Confusion()).add(expected_block, blocked)
            if blocked != expected_block:
                wrong_block.append({
                    "transcript": path, "turn": line, "expected": expected_block, "got": blocked,
                    "kind": kind, "reason": result.reason, "evidence": result.extra.get("evidence", []),
                    "signals": result.extra.get("signals", {}), "score": result.extra.get("score"),
                    "quotes": result.extra.get("evidence_quotes", []), "reminded": was_reminded,
                    "reply": _excerpt(result.step.event.get("last_assistant_message", ""), 140),
                })
        if any(key[0] == transcript for key in labels.block):
            writeback.session(len(first_stop), false_blocks)
        by_session[transcript] = {name: [a - b for a, b in zip(after, before[name], strict=True)]
                                  for name, after in counts().items()}
    for key in labels.memories:
        if key[0] not in runs:
            unmatched.append(f"{key[0]}#{key[1]} (prompt)")
    report: dict[str, Any] = {}
    if labels.shift:
        report["recall_shift"] = {**shift.to_json(), "wrong": wrong_shift}
        # the topic check alone (the reason a delivery gives, no longer its precondition): beside delivery
        report["shift_verdict"] = verdict.to_json()
    if labels.memories:
        d = delivery
        report["delivery"] = {
            **d,
            "recall": _ratio(d["reached"], d["expected"]),
            "recall_prompt_time": _ratio(d["reached_prompt_time"], d["expected"]),
            "recall_in_full": _ratio(d["reached_in_full"], d["expected"]),
            "recall_session_start": _ratio(d["reached_session_start"], d["expected"]),
            "recall_index_only": _ratio(d["reached_index_only"], d["expected"]),
            "by_language": {
                name: {**figures, "recall": _ratio(figures["reached"], figures["expected"]),
                       "recall_prompt_time": _ratio(figures["reached_prompt_time"], figures["expected"]),
                       "injected_precision": _ratio(figures["injected_relevant"], figures["injected"])}
                for name, figures in sorted(by_language.items()) if figures["expected"] or figures["injected"]
            },
            "recall_at_shifts": _ratio(d["reached_at_shifts"], d["expected_at_shifts"]),
            "injected_precision": _ratio(d["injected_relevant"], d["injected"]),
            "leaks_measured": store_ids is not None,
            "missed": missed,
            "irrelevant": irrelevant,
            "leaked": leaked,
        }
    if labels.block:
        report["writeback"] = {
            **block.to_json(),
            "by_kind": {kind: c.to_json() for kind, c in sorted(by_kind.items())},
            **writeback.to_json(block),
            "wrong": wrong_block,
            "reminded_ordinary": wrong_remind,
        }
    report["unmatched"] = unmatched
    report["by_session"] = by_session
    return report
