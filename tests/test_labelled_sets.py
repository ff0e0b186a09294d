"""Precision and recall of both gates' detectors on the labelled sets in tests/data; fails below 0.8.

Recall gate: every prompt after a session's first (first prompts are shifts by rule and would flatter the
figures), replayed as the hook sees it: the topic record of the earlier non-trivial prompts, the files the
previous turn touched and the previous reply. Positive = "shift".
Write-back gate: each Stop turn read from its transcript file by the tail reader. Positive = "block", predicted
when there is evidence and no store decision (the gate's other conditions, cap and stop_hook_active, are the
hook's and are tested there).
Both sets have a held-out part that was written after the rules were set; the figures are printed per part.
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gate.gates.evidence import find_evidence, find_store_decision
from gate.gates.topic import TopicRecord, assess, update
from gate.rules import load_rules
from gate.session.transcript import read_turn

DATA = Path(__file__).parent / "data"
FLOOR = 0.8


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, predicted: bool, actual: bool) -> None:
        if predicted and actual:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif actual:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    def line(self, name: str) -> str:
        n = self.tp + self.fp + self.fn + self.tn
        return (
            f"{name}: precision {self.precision:.2f} recall {self.recall:.2f} "
            f"(n={n}, tp={self.tp} fp={self.fp} fn={self.fn} tn={self.tn})"
        )


def _topic_score(path: Path, rules: dict[str, Any], errors: list[str]) -> Score:
    score = Score()
    for session in tomllib.loads(path.read_text(encoding="utf-8"))["session"]:
        record: TopicRecord | None = None
        files: list[str] = []
        reply = ""
        for i, turn in enumerate(session["turn"]):
            verdict = assess(turn["prompt"], record, files, rules, reply)
            if i == 0:
                assert verdict.shift == (turn["label"] == "shift"), turn["prompt"]
            else:
                actual = turn["label"] == "shift"
                score.add(verdict.shift, actual)
                if verdict.shift != actual:
                    errors.append(
                        f"  {turn['label']:7} got {verdict.reason:11} {verdict.novelty:.2f} {turn['prompt'][:70]}"
                    )
            if turn["label"] == "trivial":
                assert verdict.reason == "trivial", turn["prompt"]
            if verdict.reason != "trivial":
                record = update(record, turn["prompt"], rules, files)
            files = list(turn.get("files", []))
            reply = str(turn.get("reply", ""))
    return score


def _stop_scores(rules: dict[str, Any], errors: list[str]) -> dict[str, Score]:
    scores = {"dev": Score(), "heldout": Score()}
    directory = DATA / "stop_turns"
    labels = tomllib.loads((directory / "labels.toml").read_text(encoding="utf-8"))["turn"]
    for item in labels:
        turn = read_turn(str(directory / item["file"]))
        assert turn.complete and turn.prompt, item["file"]
        evidence = find_evidence(turn, rules)
        decision = find_store_decision(turn, rules)
        predicted = bool(evidence) and decision is None
        actual = item["label"] == "block"
        scores[item.get("set", "dev")].add(predicted, actual)
        if predicted != actual:
            errors.append(f"  {item['label']:5} {item['file']}: evidence {evidence.kinds}, store {decision}")
    return scores


def _combined(*scores: Score) -> Score:
    return Score(*(sum(getattr(s, f) for s in scores) for f in ("tp", "fp", "fn", "tn")))


def test_recall_gate_topic_shift(capsys: pytest.CaptureFixture[str]) -> None:
    rules = load_rules("topic_shift")
    errors: list[str] = []
    dev = _topic_score(DATA / "topic_sessions.toml", rules, errors)
    held = _topic_score(DATA / "topic_sessions_heldout.toml", rules, errors)
    total = _combined(dev, held)
    with capsys.disabled():
        print()
        print(total.line("recall gate (topic shift), all"))
        print(dev.line("  dev set"))
        print(held.line("  held-out set"))
        print("\n".join(errors))
    assert total.tp + total.fp + total.fn + total.tn >= 60
    assert total.precision >= FLOOR and total.recall >= FLOOR


def test_writeback_gate_evidence(capsys: pytest.CaptureFixture[str]) -> None:
    rules = load_rules("writeback")
    errors: list[str] = []
    scores = _stop_scores(rules, errors)
    total = _combined(*scores.values())
    with capsys.disabled():
        print()
        print(total.line("write-back gate (block), all"))
        print(scores["dev"].line("  dev set"))
        print(scores["heldout"].line("  held-out set"))
        print("\n".join(errors))
    assert total.tp + total.fp + total.fn + total.tn >= 30
    assert total.precision >= FLOOR and total.recall >= FLOOR


def test_stop_turn_files_match_their_builder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The committed transcripts are exactly what build_stop_turns.py writes (edit the builder, not the files)."""
    monkeypatch.syspath_prepend(str(DATA))
    sys.modules.pop("build_stop_turns", None)
    import build_stop_turns

    monkeypatch.setattr(build_stop_turns, "HERE", tmp_path)
    build_stop_turns.build()
    built = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    committed = {p.name: p.read_bytes() for p in (DATA / "stop_turns").iterdir()}
    assert built == committed
