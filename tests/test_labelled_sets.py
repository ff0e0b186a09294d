"""How good the gates are, and which named behaviours they keep.

1. Real sessions (the figures): the frozen test split of eval/labels/test/, replayed by `gate replay --labels`
   over the corpus of other people's sessions (../shared/corpora, converted by scripts/corpus/mirror.py). The
   figures are printed; each is asserted not to fall below what the current rules reach (a floor, so a change
   that costs quality fails here). Skipped where the corpus is not beside the checkout.
2. The hand-written sets in tests/data (written next to the rules: unit tests of named behaviours, not
   figures): every Stop turn and every prompt must get its label. The few prompts the topic check is known to
   get wrong are marked so (strict: one that starts passing fails, to be unmarked).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from support import load_script, report

from gate.gates.recall.topic import TopicRecord, assess, update
from gate.gates.writeback.evidence import find_evidence, find_store_decision
from gate.gates.writeback.signals import turn_signals
from gate.gates.writeback.verdict import decide
from gate.rules import load_rules
from gate.session.transcript import read_turn

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
CORPUS = REPO.parent / "shared" / "corpora"
TEST_LABELS = REPO / "eval" / "labels" / "test"

# What the current rules reach on the frozen test split (measured by this test; see eval/README.md). Floors, not
# targets: the targets of the issues are higher and not met (issue 22: blocks alone 0.40, blocked or reminded
# 0.70, false blocks 2 %, 2 of 20 long sessions with a false block).
FLOORS = {
    # precision and recall of the blocks alone; beside them (issue 22) the turns blocked or reminded at the next
    # prompt. The blocks' recall fell from 0.35 to 0.23 when a fix nothing confirmed became a reminder instead of
    # a block (a deliberate trade, measured: false blocks 4.2 % -> 2.3 % of ordinary turns, caught in all 0.35 ->
    # 0.52). With two channels the knowledge a session keeps is what is blocked or reminded; the blocks' floor
    # is now what they reach, so that they cannot fall further unseen. Issue 30's round (rules chosen on the dev
    # split, where blocks went 0.65 / 0.33 -> 0.77 / 0.38 and false blocks 1.4 % -> 0.9 %) moved them on test to
    # 0.33 / 0.19 and 0.52 -> 0.48, one turn labelled to block fewer (a bare "should be" no longer reads as a
    # correction): a fall reported with its cause, not reverted because the test split showed it. Its second round
    # (dev: blocks 0.77 / 0.38 -> 0.86 / 0.39, false blocks 0.9 % -> 0.5 %) held the test split where it stood but
    # for one change, chosen on dev (1 turn more blocked, labelled to block): .claude/agents/ and .claude/commands/
    # are no longer notes places, and on test that alone made 3 more false blocks (precision 0.33 -> 0.29, false
    # blocks 2.1 % -> 2.6 %, long sessions with one 7 -> 8). Reported with its cause, the floors set where it leaves
    # them; dropping that change (its own commit) restores the earlier ones.
    "writeback": {"precision": 0.28, "recall": 0.22, "recall_blocked_or_reminded": 0.48},
    "recall_shift": {"precision": 0.60, "recall": 0.45},
}
# Delivery on the frozen test split (issue 21, measured with the rules chosen on the dev split): expected
# memories that reached the agent — index line or full text — 421 of 637 (0.66; 0.38 before); delivered in full
# at a prompt 257 (0.40). Injected precision fell (0.22 before, 0.18 now) and noise rose (35 → 60 memories at
# prompts that should get none): those two are asserted where they stand now, as the bounds not to cross.
# Issue 29's rounds since: reached 0.84, at a prompt 0.41, precision 0.19, noise 54. Then a follow-up's hit must
# hold three of the prompt's own terms (rules/recall.toml [fire] follow_up_min_terms, chosen on dev as is and with
# its stores padded): on test, noise 54 → 34, precision 0.19 → 0.21, reached 0.84 → 0.82, and at a prompt 0.41 →
# 0.36 — a fall, reported with its cause; the floors are set where it leaves them.
DELIVERY_FLOORS = {"recall": 0.80, "recall_prompt_time": 0.35, "injected_precision": 0.20}
DELIVERY_CEILINGS = {"noise": 60, "leaks": 0}
# The agent's own queries on the frozen test split (issue 29: top 3 of plain `gate search` for what each of two
# annotators playing the agent wrote at each prompt). Since a plain search admits only memories holding two of
# the query's terms (chosen on dev), they reach at a prompt 0.60 and 0.58 at precision 0.29 and 0.30, noise 146
# and 131 (before: 0.60 / 0.28, 182; 0.57 / 0.27, 171). Floors where they stand, each annotator apart.
QUERY_FLOORS = {"recall_at_prompt": 0.57, "precision": 0.28}
QUERY_CEILINGS = {"noise": 150}
# ... and what must not rise: false blocks as a share of ordinary turns (0.023 when set), reminders on ordinary
# turns per 100 turns (7.3), sessions of 10 turns or more that see a false block (7 of 20). (Today's figures are
# in eval/quality/run.json: 0.021, 7.0, 7 of 20.)
CEILINGS = {
    # (false blocks 0.025 -> 0.026 and long sessions 7 -> 8: the notes-places change above; 0.026 -> 0.028 when a
    # failed `cd web && npm test` stopped being skipped as a listing (its cd matched recovery_ignores): a
    # correctness fix that changed nothing on dev and on test blocked one turn more of each kind, labelled to
    # block and not — recall 0.19 -> 0.23, reported with its cause)
    "writeback": {"false_block_rate": 0.028, "reminders_on_ordinary_per_100_turns": 8.0,
                  "long_sessions_with_false_block": 8},
}


# --- 1. the frozen test split of real sessions ----------------------------------------------------------------


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (CORPUS / "sessions").is_dir():
        pytest.skip("../shared/corpora is not beside this checkout")
    out = tmp_path_factory.mktemp("corpus-mirror")
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "corpus" / "mirror.py"), "--out", str(out), "--corpus", str(CORPUS)],
        check=True, capture_output=True, timeout=600,
    )
    return out


def _quality() -> Any:
    """scripts/quality.py: the one measurement docs/quality.md's tables are written from."""
    return load_script("quality")


@pytest.fixture(scope="module")
def measured(mirror: Path) -> dict[str, Any]:
    """Both splits replayed with today's code, each once, with its three label files together."""
    return _quality().measure(mirror)


def test_the_doc_s_tables_are_the_saved_run() -> None:
    """docs/quality.md's gate-quality tables are the rendering of eval/quality/run.json (and before.json): no
    figure of them is typed by hand. (Runs without the corpus.)"""
    quality = _quality()
    section = quality.doc_section(quality.DOC.read_text(encoding="utf-8"))
    assert section is not None, "docs/quality.md lost its quality-figures markers"
    assert section == quality.render(quality.load(quality.RUN_FILE), quality.load(quality.BEFORE_FILE)), (
        "docs/quality.md is not the rendering of eval/quality/run.json: run scripts/quality.py --root MIRROR")


def _apart(now: Any, saved: Any, path: str, slack: bool) -> list[str]:
    """Where two runs' figures differ; with `slack`, by more than one case (a count by more than 1, a ratio by
    more than 0.02)."""
    if isinstance(now, dict) and isinstance(saved, dict):
        return [d for key in sorted(set(now) | set(saved))
                for d in _apart(now.get(key), saved.get(key), f"{path}.{key}", slack)]
    if isinstance(now, list) and isinstance(saved, list) and len(now) == len(saved):  # an interval: its two ends
        return [d for i, (a, b) in enumerate(zip(now, saved, strict=True)) for d in _apart(a, b, f"{path}[{i}]", slack)]
    numbers = (int, float)
    if slack and isinstance(now, numbers) and isinstance(saved, numbers) and not isinstance(now, bool):
        room = 1 if isinstance(now, int) and isinstance(saved, int) else 0.02
        if ".delivery_padded." in path and isinstance(saved, int):
            # The padded stores' replay (several hundred memories) moved by 4 of 491 reached memories between
            # two runs of the same code (the second under the system python in .ci/run): 1 % of the count.
            room = max(room, saved // 100)
        return [] if abs(now - saved) <= room else [f"{path}: {saved} saved, {now} now"]
    return [] if now == saved else [f"{path}: {saved} saved, {now} now"]


def test_today_s_code_measures_the_saved_run(measured: dict[str, Any]) -> None:
    """The figures the doc shows are what the code measures now: a change that moves them must write them. The
    write-back figures replay exactly; the recall ones may move by one case from run to run (one Chinese prompt
    of the test split flips between two runs of the same code — timing, most likely whether the cue-table filter
    the recall gate builds in the background is ready when the replayed prompt comes), so they get one case of
    room."""
    quality = _quality()
    saved = quality.load(quality.RUN_FILE)
    for split in quality.SPLITS:
        now, then = measured[split], saved.get(split, {})
        apart = _apart(now.get("writeback"), then.get("writeback"), f"{split}.writeback", slack=False)
        apart += _apart({k: v for k, v in now.items() if k != "writeback"},
                        {k: v for k, v in then.items() if k != "writeback"}, split, slack=True)
        assert not apart, ("today's code measures other figures than eval/quality/run.json holds: run "
                           "scripts/quality.py --root MIRROR and commit the run with the doc", apart)


@pytest.mark.parametrize("gate", sorted(FLOORS))
def test_the_frozen_test_split(measured: dict[str, Any], gate: str) -> None:
    test = measured["test"]
    assert not test["unmatched"], test["unmatched"]
    # (the shift floors are the topic check's: with the delivery stores beside them the recall gate also searches
    # on relevance, and what it searched is no longer the topic verdict alone)
    scores = test[{"writeback": "writeback", "recall_shift": "shift_verdict"}[gate]]
    keys = ("precision", "recall", "n", "tp", "fp", "fn", "tn", *FLOORS[gate], *CEILINGS.get(gate, {}))
    figures = {k: scores[k] for k in dict.fromkeys(keys)}
    report(f"test split, {gate}", figures)
    below = [f"{m} {figures[m]} < {floor}" for m, floor in FLOORS[gate].items() if figures[m] < floor]
    above = [f"{m} {figures[m]} > {top}" for m, top in CEILINGS.get(gate, {}).items() if figures[m] > top]
    assert not below + above, (below + above, figures)


def test_delivery_on_the_frozen_test_split(measured: dict[str, Any]) -> None:
    figures = measured["test"]["delivery"]
    report("test split, delivery", figures)
    for measure, floor in DELIVERY_FLOORS.items():
        assert figures[measure] >= floor, (measure, figures)
    for measure, ceiling in DELIVERY_CEILINGS.items():
        assert figures[measure] <= ceiling, (measure, figures)
    assert figures["leaks_measured"] and figures["by_language"]["zh"]["expected"] > 0  # Chinese measured apart


def test_the_agent_s_queries_on_the_frozen_test_split(measured: dict[str, Any]) -> None:
    annotators = measured["test"]["agent_queries"]
    assert len(annotators) >= 2  # two annotators wrote test queries (eval/annotations/queries/)
    for name, scores in sorted(annotators.items()):
        figures = scores["agent"]
        report(f"test split, agent queries {name}", figures)
        assert scores["unmatched"] == 0, name  # every query names a replayed prompt
        for measure, floor in QUERY_FLOORS.items():
            assert figures[measure] >= floor, (name, measure, figures)
        for measure, ceiling in QUERY_CEILINGS.items():
            assert figures[measure] <= ceiling, (name, measure, figures)


# --- 2. named behaviours: the hand-written sets ---------------------------------------------------------------

STOP_TURNS = tomllib.loads((DATA / "stop_turns" / "labels.toml").read_text(encoding="utf-8"))["turn"]
# Written turns the gate no longer blocks but defers to a reminder at the next prompt
# (gate/gates/writeback/reminder.py), and why (measured on the dev split of real sessions, eval/README.md):
# - a trap stated in words, with no other sign that the turn learned it, weighs 0.7 (rules/writeback.toml
#   [score.weights] gotcha) under the block threshold of 1.0 — at 1.0, lone trap phrases made 6 more false blocks
#   on the dev split and caught no more. A trap with a second signal (a fix, a decision, a recovery) still blocks.
# - a cause stated with nothing to confirm it (no run that failed and now passes, no test run after the edits,
#   no "works now") is a hypothesis until the user's next prompt says so: stated causes in the middle of
#   debugging loops made 32 of the dev split's 57 false blocks (issue 22).
#   (A trap in a turn the prompt asked to fix blocks: asked_fix adds 0.3, as for 19-gotcha-requires-flag.)
LONE_GOTCHAS = {"05-gotcha-index-reload.jsonl", "06-gotcha-staging-vpn.jsonl", "14-gotcha-macos-state-dir.jsonl",
                "46-heldout-gotcha-stdout.jsonl"}
UNCONFIRMED_FIXES = {"04-fix-importer-encoding.jsonl", "16-fix-cache-key-timezone.jsonl"}
DEFERRED = LONE_GOTCHAS | UNCONFIRMED_FIXES


@pytest.mark.parametrize("item", STOP_TURNS, ids=[item["file"] for item in STOP_TURNS])
def test_each_written_stop_turn_gets_its_label(item: dict[str, Any]) -> None:
    rules = load_rules("writeback")
    turn = read_turn(str(DATA / "stop_turns" / item["file"]), previous_reply=True)
    assert turn.complete and turn.prompt, item["file"]
    evidence = find_evidence(turn, rules)
    verdict = decide({**evidence.features, **turn_signals(turn, rules)}, rules)
    stored = find_store_decision(turn, rules) is not None
    blocked = verdict.block and not stored
    if item["file"] in DEFERRED:  # labelled "block": now reminded at the next prompt instead
        assert item["label"] == "block" and not blocked and verdict.remind and not stored, (verdict, evidence)
        assert set(item.get("kinds", [])) & set(verdict.kinds), (item.get("kinds"), verdict.kinds)
        return
    assert blocked == (item["label"] == "block"), (verdict, evidence)
    if blocked:
        assert set(item.get("kinds", [])) & set(verdict.kinds), (item.get("kinds"), verdict.kinds)


def _prompts() -> list[Any]:
    """(id, session turns up to this prompt) for every prompt after a session's first."""
    cases = []
    for name in ("topic_sessions.toml", "topic_sessions_heldout.toml"):
        for number, session in enumerate(tomllib.loads((DATA / name).read_text(encoding="utf-8"))["session"]):
            for index in range(len(session["turn"])):
                turn = session["turn"][index]
                marks = [pytest.mark.xfail(strict=True, reason=KNOWN_TOPIC_MISSES[turn["prompt"]])] if (
                    turn["prompt"] in KNOWN_TOPIC_MISSES) else []
                cases.append(pytest.param(session["turn"][: index + 1], id=f"{name[:-5]}-{number}-{index}",
                                          marks=marks))
    return cases


# Prompts of the written sets the topic check gets wrong (measured): kept visible, not hidden in a figure.
KNOWN_TOPIC_MISSES = {
    "set max_active_runs to 1 and make the task idempotent with a delete-then-insert":
        "a follow-up with many new words looks like a new subject",
    "The Stop hook blocked nine times in a row last night, the cap didn't hold":
        "a new problem told in the words of the current subject",
    "Add a changelog entry for the 0.4 release": "a short new task shares the session's words",
    "mention the new --json flags and the dropped Python 3.9 support": "a follow-up made of new words",
    "What's our policy on logging PII? Is there a doc?": "a short question on a new subject",
    "Plot monthly revenue as a stacked bar chart with matplotlib": "a new subject in few content words",
    "make the legend sit outside the axes": "a follow-up made of new words",
    "add a troubleshooting part for the common docker compose errors": "a follow-up made of new words",
}


@pytest.mark.parametrize("turns", _prompts())
def test_each_written_prompt_gets_its_label(turns: list[dict[str, Any]]) -> None:
    rules = load_rules("topic_shift")
    record: TopicRecord | None = None
    files: list[str] = []
    reply = ""
    for turn in turns[:-1]:
        verdict = assess(turn["prompt"], record, files, rules, reply)
        if verdict.reason != "trivial":
            record = update(record, turn["prompt"], rules, files)
        files = list(turn.get("files", []))
        reply = str(turn.get("reply", ""))
    last = turns[-1]
    verdict = assess(last["prompt"], record, files, rules, reply)
    if last["label"] == "trivial":
        assert verdict.reason == "trivial", verdict
    else:
        assert verdict.shift == (last["label"] == "shift"), json.dumps({"prompt": last["prompt"], "got": verdict.reason,
                                                                         "novelty": verdict.novelty})


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
