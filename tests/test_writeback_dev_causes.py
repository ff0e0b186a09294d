"""The write-back errors issue 30 names, found again on the dev split and fixed by rule (synthetic text): the user's
own words for a rule that no pattern knew, a rule or a conceded correction taken on without a tool, a go-on prompt
whose edits alone reached the reminder, "should be" in a specification read as a correction, a question hidden by
the offer after it, and "nothing worth recording" in Chinese."""

from __future__ import annotations

from typing import Any

import pytest
from support import stop_turn

from gate.gates.writeback.evidence import find_evidence, find_store_decision
from gate.gates.writeback.signals import asks_user, turn_signals
from gate.gates.writeback.verdict import decide
from gate.rules import load_rules
from gate.session.turn import Turn


@pytest.fixture
def rules() -> Any:
    return load_rules("writeback")


_turn = stop_turn


def _verdict(turn: Turn, rules: Any) -> Any:
    return decide({**find_evidence(turn, rules).features, **turn_signals(turn, rules)}, rules)


def _edit(path: str) -> tuple[str, dict[str, Any]]:
    return ("Edit", {"file_path": path, "old_string": "a", "new_string": "b"})


FIVE_EDITS = [_edit(f"src/views/page_{n}.vue") for n in range(5)]
DONE = "Updated the five views; each one now renders the new header."


@pytest.mark.parametrize("prompt", ["continue", "lets continue", "Please continue. Sorry, noise", "繼續", "go ahead"])
def test_a_go_on_prompt_with_five_files_edited_is_not_reminded(rules: Any, prompt: str) -> None:
    turn = _turn(prompt, DONE, FIVE_EDITS)
    assert turn_signals(turn, rules).get("continues") == 1.0
    verdict = _verdict(turn, rules)
    assert not verdict.block and not verdict.remind, verdict


def test_five_files_edited_for_a_request_stay_a_reminder(rules: Any) -> None:
    verdict = _verdict(_turn("move every view onto the new header component", DONE, FIVE_EDITS), rules)
    assert verdict.remind and not verdict.block, verdict
    # a go-on that settles something is no bare go-on
    settles = turn_signals(_turn("lets continue to use the local database", DONE, FIVE_EDITS), rules)
    assert "continues" not in settles and settles.get("decides") == 1.0


@pytest.mark.parametrize(
    "prompt",
    [
        "應該用 account.role.name 為主，不是另外存一個 roleName 欄位",
        "应该直接读 config.timeout，不是在每个组件里写死",
        "we need to settle on dashboard or admin, we can't use both",
    ],
)
def test_the_users_own_words_for_a_rule_block(rules: Any, prompt: str) -> None:
    turn = _turn(prompt, "Done: every screen now reads it that way.", [_edit("src/account.vue")])
    evidence = find_evidence(turn, rules)
    assert evidence.features.get("user_rule") == 1.0 and evidence.kinds == ["preference"]
    verdict = _verdict(turn, rules)
    assert verdict.block, verdict


def test_a_rule_the_user_states_blocks_without_a_tool(rules: Any) -> None:
    turn = _turn("不要用輪詢，而是改用 websocket 推送狀態", "了解，後面的設計都改用 websocket 推送，不再輪詢。")
    signals = turn_signals(turn, rules)
    assert signals.get("explanation_only") == 1.0
    verdict = _verdict(turn, rules)
    assert verdict.block and verdict.veto == "", verdict


def test_a_correction_conceded_without_a_tool_is_reminded(rules: Any) -> None:
    turn = _turn("none of those three changes show up on the screen",
                 "You're right, I described what the commits claim rather than what the screenshots show.")
    verdict = _verdict(turn, rules)
    assert verdict.remind and not verdict.block, verdict


def test_should_be_in_a_specification_is_no_correction(rules: Any) -> None:
    spec = "Lay out the repo: the layout should be docs/, src/ and tests/, each with its own README."
    turn = _turn(spec, "Laid out docs/, src/ and tests/ with a README in each.", FIVE_EDITS)
    assert "correction" not in turn_signals(turn, rules)
    assert not _verdict(turn, rules).block
    # the user telling the agent what to use instead is one
    told = _turn("you should use the v2 endpoint, the v1 one is gone", "Switched the client to v2.", FIVE_EDITS)
    assert turn_signals(told, rules).get("correction") == 1.0


def test_asking_the_users_judgement_waits_on_the_user(rules: Any) -> None:
    text = "按鈕顏色已經換成深藍色，頁面正常顯示。\n\n你覺得這個深藍色可以嗎？如果想再淺一點，我可以再改。"
    assert asks_user(text, rules)
    verdict = _verdict(_turn("按鈕顏色太淡了，幫我改深一點", text, [_edit("src/detail.vue")]), rules)
    assert not verdict.block and verdict.veto == "asks_user", verdict


def test_nothing_worth_recording_said_in_chinese_decides_about_memory(rules: Any) -> None:
    turn = _turn("這個要寫進筆記嗎？", "不用，這只是一般的格式調整，沒有值得記錄的東西。")
    decision = find_store_decision(turn, rules)
    assert decision is not None and decision.kind == "acknowledged"
