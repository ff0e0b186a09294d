"""Recall gate topic-shift detection: trivial prompts, first prompts, follow-ups, pivots, the record."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.gates.recall.prompt import is_trivial, path_terms
from gate.gates.recall.topic import ShiftVerdict, TopicRecord, assess, update
from gate.rules import load_rules


@pytest.fixture
def rules() -> dict[str, Any]:
    # function scope: loaded under the isolated GATE_HOME (a module fixture would write the rules snapshot into
    # the real user cache, and read whatever an earlier version left there)
    return load_rules("topic_shift")


@pytest.mark.parametrize(
    "prompt",
    [
        "yes",
        "ok do it",
        "continue",
        "go ahead",
        "3",
        "1 and 3",
        "option 2",
        "/compact",
        "/review 12",
        "Yes please, go ahead.",
        "lgtm",
        "k",
        "sounds good",
        "thanks!",
        "ok, ship it",
        "👍",
    ],
)
def test_trivial(prompt: str, rules: dict[str, Any]) -> None:
    assert is_trivial(prompt, rules)
    verdict = assess(prompt, None, [], rules)
    assert not verdict.shift and verdict.reason == "trivial"


@pytest.mark.parametrize(
    "prompt",
    [
        "no, use postgres instead",
        "yes but handle the timezone case too",
        "continue with the CSV export",
        "why does the ledger lose writes?",
        "/tmp/x is full, clean it",
    ],
)
def test_not_trivial(prompt: str, rules: dict[str, Any]) -> None:
    assert not is_trivial(prompt, rules)


def test_first_prompt_is_a_shift_with_readable_terms(rules: dict[str, Any]) -> None:
    verdict = assess("The waterfall skips the reserve account trigger after month end", None, [], rules)
    assert verdict.shift and verdict.reason == "first_prompt"
    assert "reserve account trigger" in verdict.terms
    assert any("waterfall" in t for t in verdict.terms)
    assert 1 <= len(verdict.terms) <= 6
    assert all(" " in t or t.isalnum() for t in verdict.terms)
    empty = assess("The waterfall skips the reserve account", TopicRecord(), [], rules)
    assert empty.reason == "first_prompt"


def test_identifiers_read_as_their_words(rules: dict[str, Any]) -> None:
    verdict = assess("reserveAccount is negative in computeWaterfall", None, [], rules)
    assert verdict.terms[:2] == ["reserve account", "compute waterfall"] or "reserve account" in verdict.terms
    assert "reserveaccount" not in verdict.stems


def test_follow_up_is_not_a_shift_and_pivot_is(rules: dict[str, Any]) -> None:
    record = update(None, "The waterfall skips the reserve account trigger after month end", rules)
    follow = assess("does the reserve trigger also fire on the month end waterfall run?", record, [], rules)
    assert not follow.shift and follow.reason == "no_shift"
    pivot = assess("set up the docker build for the release pipeline", record, [], rules)
    assert pivot.shift and pivot.reason == "topic_shift"
    assert pivot.novelty > follow.novelty


def test_touched_files_count_as_topic(rules: dict[str, Any]) -> None:
    record = update(None, "why is the invoice total wrong for discounts?", rules)
    prompt = "look at the rounding helper in money.py"
    without = assess(prompt, record, [], rules)
    with_files = assess(prompt, record, ["/repo/src/billing/rounding.py", "/repo/src/billing/money.py"], rules)
    assert with_files.novelty < without.novelty
    assert not with_files.shift


def test_previous_reply_words_count_as_topic(rules: dict[str, Any]) -> None:
    record = update(None, "why is the invoice total wrong for discounts?", rules)
    reply = "The discount is applied after tax; the rounding happens per line item."
    assert not assess("apply the rounding per line item before tax then", record, [], rules, reply).shift


def test_path_terms_drop_generic_parts(rules: dict[str, Any]) -> None:
    got = path_terms(["/home/someone/code/proj/src/billing/reserve_account.py", "tests/test_ledger.py"], rules)
    assert {"bill", "reserv", "account", "ledger"} <= got
    assert not {"src", "py", "home", "test"} & got


def test_record_decays_and_forgets(rules: dict[str, Any]) -> None:
    record = update(None, "tantivy index segment merge", rules)
    first = dict(record.weights)
    for i in range(8):
        record = update(record, f"unrelated docker compose topic number {i}", rules)
    assert "segment" in first and "segment" not in record.weights
    assert record.prompts == 9
    assert record.weights["docker"] <= rules["record"]["max_weight"]


def test_record_is_bounded(rules: dict[str, Any]) -> None:
    record: TopicRecord | None = None
    for i in range(400):
        record = update(record, f"word{i}a alpha{i}b beta{i}c gamma{i}d", rules)
    assert record is not None
    assert len(record.weights) <= rules["record"]["max_terms"]


def test_record_round_trips_through_json(rules: dict[str, Any]) -> None:
    record = update(None, "ledger compaction window", rules, ["/r/gate/session/ledger.py"])
    again = TopicRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again.prompts == record.prompts
    assert again.weights == pytest.approx(record.weights, abs=1e-3)


@pytest.mark.parametrize("junk", [None, 3, "x", {"weights": "no"}, {"weights": {"a": "1", "b": float("nan")}}])
def test_record_from_junk(junk: Any) -> None:
    assert not TopicRecord.from_dict(junk)


def test_long_pasted_prompt_is_bounded(rules: dict[str, Any]) -> None:
    record = update(None, "the importer crashes", rules)
    verdict = assess("the importer crashes: " + "Traceback frame value " * 20_000, record, [], rules)
    assert isinstance(verdict, ShiftVerdict)
    assert len(verdict.terms) <= 6


@settings(max_examples=150, deadline=None)
@given(prompt=st.text(max_size=300), prior=st.text(max_size=200))
def test_never_raises(prompt: str, prior: str) -> None:
    rules = load_rules("topic_shift")
    record = update(None, prior, rules)
    verdict = assess(prompt, record, [prior], rules)
    assert 0.0 <= verdict.novelty <= 1.0
    assert verdict.reason in {"first_prompt", "topic_shift", "no_shift", "trivial"}
    assert len(verdict.terms) <= 6
    json.dumps(update(record, prompt, rules).to_dict())


def test_discourse_cues(rules: dict[str, Any]) -> None:
    record = update(None, "The websocket client reconnects in a tight loop when the server restarts", rules)
    # a continuation marker keeps an all-new short follow-up on the topic
    assert assess("cap the retries with exponential backoff", record, [], rules).shift
    assert not assess("and cap the retries with exponential backoff then", record, [], rules).shift
    # an explicit pivot or a return to an earlier subject is a shift even when some words are shared
    assert assess("Separate thing: the websocket docs need a diagram of the handshake", record, [], rules).shift
    assert assess("Back to the billing waterfall trigger, again", record, [], rules).shift


def test_trivial_checks_agree_with_their_regexes() -> None:
    """The prompt checks that avoid compiling a regex (a hook's milliseconds) answer as the regex would."""
    import random
    import re

    from gate.gates.recall import prompt

    rng = random.Random(5)
    alphabet = "ab nd or 0123456789 .,;:#()-+/&'’_!?\"\t\n\x1c\x00é١٢\u2003AZ"
    samples = ["", "1", "1 and 2", "1, 2 or 3", "and", "or", " 3 and ", "1 an d 2", "and or", "١٢ and ٣", "\u20031"]
    samples += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(20_000)]
    for text in samples:
        assert prompt._only_numbers(text) == (re.match(prompt._NUMBERS, text) is not None), repr(text)
        expected = re.sub(r"\s+", " ", re.sub(prompt._NOT_WORD, " ", text.lower())).strip()
        assert prompt._normalise(text) == expected, repr(text)


# The record is cut at max_terms among equal weights: which terms stay must not depend on the hash seed.
_SEEDED_UPDATE = """
import json
from gate.gates.recall.topic import update
from gate.rules import load_rules
rules = load_rules("topic_shift")
rules["record"] = {**rules.get("record", {}), "max_terms": 5}
prompt = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar"
record = update(None, prompt, rules, ["src/papa/quebec.py", "lib/romeo/sierra.py"])
print(json.dumps(record.weights))
"""


def test_the_topic_record_is_the_same_under_any_hash_seed(tmp_path) -> None:
    import os
    import subprocess
    import sys

    outputs = set()
    for seed in ("1", "2", "3", "4", "5", "6"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "GATE_HOME": str(tmp_path / "home")}
        done = subprocess.run([sys.executable, "-c", _SEEDED_UPDATE], capture_output=True, text=True, env=env,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout.strip())
    assert len(outputs) == 1, outputs
    assert list(json.loads(outputs.pop())) == ["alpha", "bravo", "charli", "delta", "echo"]
