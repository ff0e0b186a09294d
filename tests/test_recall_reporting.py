"""`gate replay --labels` reports delivery apart by how it reached the agent (issue 21): an index line at session
start, the full text at session start, the full text at a prompt; Chinese sessions apart; a memory shown as an
index line reaches the agent but is no full delivery; label files given together are scored together."""

from __future__ import annotations

import json
from pathlib import Path

from gate.gates.base import Outcome
from gate.replay.engine import SessionRun, StepResult
from gate.replay.labels import load_labels, merged, score
from gate.replay.report import render_scores
from gate.replay.timeline import Step, Timeline


def _step(name: str, line: int, **event: str) -> Step:
    return Step({"hook_event_name": name, **event}, line, 0, line)


def _run(path: str, prompts: list[str]) -> SessionRun:
    timeline = Timeline(path)
    start = _step("SessionStart", 0, source="startup")
    results = [StepResult(start, Outcome("fired", "FIRED_SESSION_START", delivered=["m-pref"],
                                         extra={"indexed": ["m-gotcha", "m-later"]}))]
    first = _step("UserPromptSubmit", 1, prompt=prompts[0])
    results.append(StepResult(first, Outcome("fired", "FIRED_SESSION_START", delivered=["m-decision"],
                                             extra={"shift": True})))
    second = _step("UserPromptSubmit", 5, prompt=prompts[1])
    results.append(StepResult(second, Outcome("fired", "FIRED_RELEVANT", delivered=["m-later", "m-noise"],
                                              extra={"shift": False})))
    timeline.steps = [r.step for r in results]
    return SessionRun(timeline, results)


def test_delivery_apart_by_tier_and_language(tmp_path: Path) -> None:
    labels_file = tmp_path / "delivery.jsonl"
    english, chinese = str(tmp_path / "en.jsonl"), str(tmp_path / "zh.jsonl")
    lines = []
    for path in (english, chinese):
        lines.append({"transcript": path, "prompt": 1, "memories": ["m-decision", "m-gotcha", "m-pref"]})
        lines.append({"transcript": path, "prompt": 5, "memories": ["m-later"]})
    labels_file.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    labels = load_labels(str(labels_file))
    runs = {english: _run(english, ["How does the waterfall fill the reserve?", "and the trigger?"]),
            chinese: _run(chinese, ["儲備帳戶怎麼填", "那觸發條件呢"])}
    d = score(labels, runs, {english: {"m-decision", "m-gotcha", "m-pref", "m-later", "m-noise"},
                             chinese: {"m-decision", "m-gotcha", "m-pref", "m-later", "m-noise"}})["delivery"]
    # per session: 4 expected; all reach the agent (m-gotcha by its index line only; m-later by its index line
    # first, then in full at prompt 5)
    assert (d["expected"], d["reached"]) == (8, 8)
    assert d["reached_index_only"] == 2  # m-gotcha in each session: never delivered in full
    assert d["reached_session_start"] == 2  # m-pref, in full at session start
    assert d["reached_prompt_time"] == 4  # m-decision at prompt 1, m-later at prompt 5
    assert d["reached_in_full"] == 6  # all but m-gotcha
    assert d["indexed"] == 4 and d["injected"] == 6 and d["injected_relevant"] == 4
    assert set(d["by_language"]) == {"other", "zh"} and d["by_language"]["zh"]["expected"] == 4
    text = "\n".join(render_scores({"delivery": d, "unmatched": []}, show_wrong=False))
    assert "prompt-time 0.50 (4)" in text and "index line only 0.25 (2; 4 index lines shown)" in text
    assert "zh: delivery 1.00 (4 of 4)" in text


def test_label_files_given_together_are_scored_together(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text(json.dumps({"transcript": "t.jsonl", "prompt": 3, "memories": ["m-1"]}) + "\n")
    second.write_text(json.dumps({"transcript": "t.jsonl", "prompt": 3, "shift": True}) + "\n"
                      + json.dumps({"transcript": "u.jsonl", "prompt": 1, "shift": False}) + "\n")
    both = merged([load_labels(str(first)), load_labels(str(second))])
    key = (str(tmp_path / "t.jsonl"), 3)
    assert both.memories[key] == ["m-1"] and both.shift[key] is True
    assert both.transcripts == [str(tmp_path / "t.jsonl"), str(tmp_path / "u.jsonl")]
