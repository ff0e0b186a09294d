"""The write-back gate's structural signals and score (issue 14), on Turn objects built directly: what a turn did
beyond what it said, the vetoes no score overrides, other languages, and the kind named in the message."""

from __future__ import annotations

from typing import Any

import pytest

from gate.gates.writeback.evidence import find_evidence
from gate.gates.writeback.signals import asks_user, recovered, turn_signals, wrote_notes
from gate.gates.writeback.verdict import decide
from gate.rules import load_rules
from gate.session.turn import ToolResult, ToolUse, Turn
from gate.shellwords import SETUP_COMMANDS, main_command, program, setup_commands


@pytest.fixture
def rules() -> Any:
    return load_rules("writeback")


def _turn(prompt: str, *texts: str, tools: list[tuple[str, dict[str, Any], str, bool]] = (),
          previous: str = "") -> Turn:
    turn = Turn(prompt=prompt, assistant_texts=list(texts), complete=True)
    for i, (name, tool_input, result, is_error) in enumerate(tools):
        turn.tool_uses.append(ToolUse(f"t{i}", name, tool_input, seq=2 * i))
        turn.tool_results.append(ToolResult(f"t{i}", result, is_error, seq=2 * i + 1))
    turn.previous_reply = previous
    return turn


def _verdict(turn: Turn, rules: Any) -> Any:
    return decide({**find_evidence(turn, rules).features, **turn_signals(turn, rules)}, rules)


EDIT = ("Edit", {"file_path": "src/app.py", "old_string": "a", "new_string": "b"}, "ok", False)


@pytest.mark.parametrize(
    ("prompt", "text", "kind"),
    [
        ("修一下折扣的計算", "問題找到了，根本原因是 applyDiscount 讀到的是含稅的價格欄位。改完後測試都通過了。",
         "fix"),
        ("部署腳本為什麼失敗", "原因是 CI 的 Node 版本太舊，所以 pnpm 安裝失敗。升級後現在可以安裝了。", "fix"),
        ("le build échoue sur la CI",
         "La cause était une variable d'environnement manquante. Le build passe maintenant.", "fix"),
        ("quelle base pour le cache ?", "J'ai choisi SQLite plutôt que Redis : l'outil tourne hors ligne.", "decision"),
        ("以後 PR 一律指定 reviewer 給最後修改的人", "好的。", "preference"),
        ("à l'avenir, lance toujours les tests avant de committer", "Compris.", "preference"),
    ],
)
def test_other_languages_carry_evidence(rules: Any, prompt: str, text: str, kind: str) -> None:
    verdict = _verdict(_turn(prompt, text, tools=[EDIT]), rules)
    assert verdict.block and verdict.kinds[0] == kind, verdict


def test_a_choice_between_offered_options_is_a_decision(rules: Any) -> None:
    offered = "Two ways: 1. refetch the users after saving, 2. update the store in place. Which do you prefer?"
    turn = _turn("the second one, update in place", "Done: the mutation now updates the user in place.",
                 tools=[EDIT], previous=offered)
    signals = turn_signals(turn, rules)
    assert signals["choice"] == 1.0
    verdict = _verdict(turn, rules)
    assert verdict.block and verdict.kinds == ["decision"]
    # without alternatives on the table, the same words choose nothing
    assert "choice" not in turn_signals(_turn(turn.prompt, *turn.assistant_texts, tools=[EDIT],
                                              previous="I updated the docs."), rules)
    # a question weighs options; it does not pick one
    assert "choice" not in turn_signals(_turn("the second one, or is the first safer?", "…", previous=offered), rules)


def test_a_prompt_that_settles_it_needs_no_offer(rules: Any) -> None:
    for prompt in ("lets stick with local postgres", "改來改去太麻煩，還是之前的做法", "用 fetch 的好了"):
        assert turn_signals(_turn(prompt, "OK.", tools=[EDIT]), rules).get("decides") == 1.0, prompt


def test_a_failed_command_then_another_that_works_is_learned_by_trial(rules: Any) -> None:
    turn = _turn("open a PR for this branch", "PR created.", tools=[
        ("Bash", {"command": "gh pr create --fill"}, "zsh: command not found: gh", True),
        ("Bash", {"command": "ls /opt/homebrew/bin"}, "gh\nnode", False),
        ("Bash", {"command": "/opt/homebrew/bin/gh pr create --fill"}, "https://example.test/pull/12", False),
    ])
    assert recovered(turn, rules) == ("gh pr create --fill", "/opt/homebrew/bin/gh pr create --fill")
    # a search that finds nothing teaches nothing
    quiet = _turn("find the config", "Found it.", tools=[
        ("Bash", {"command": "grep -r timeout src"}, "", True),
        ("Bash", {"command": "grep -r Timeout src"}, "x", False),
    ])
    assert recovered(quiet, rules) is None


def test_the_program_of_a_command_is_the_one_after_the_directory_change(rules: Any) -> None:
    # `cd web && npm test` runs npm: a failed `cd web && npm test` then a passing `cd web && ls` recovered nothing,
    # and a failed `cd web && npm test` then a passing `npm --prefix web test` is the same program made to work.
    listing = _turn("why do the tests fail", "They fail on a missing module.", tools=[
        ("Bash", {"command": "cd web && npm test"}, "Error: Cannot find module 'x'", True),
        ("Bash", {"command": "cd web && ls node_modules"}, "a\nb", False),
    ])
    assert recovered(listing, rules) is None
    prefixed = _turn("run the web tests", "They pass with the prefix.", tools=[
        ("Bash", {"command": "cd web && npm test"}, "npm ERR! missing script", True),
        ("Bash", {"command": "npm --prefix web test"}, "ok", False),
    ])
    assert recovered(prefixed, rules) == ("cd web && npm test", "npm --prefix web test")
    assert program("cd web; CI=1 /usr/local/bin/npx jest --ci") == "npx"
    assert main_command("cd web") == "cd web"  # all set-up: the line itself
    assert program("cd web && time npm test") == "npm"  # a wrapper runs the program after it
    assert setup_commands({"signals": {"setup_commands": "cd"}}) == SETUP_COMMANDS  # a hand-edited rule gone wrong


@pytest.mark.parametrize(
    "ending",
    [
        "Which do you prefer: the static page or the Vue entry?",
        "Would you like me to 1) keep debugging it, or 2) write the skill by hand",
        "你要我：1. 繼續除錯 2. 手動建立",
        "Souhaitez-vous que je garde l'ancienne API ?",
    ],
)
def test_a_turn_that_waits_on_the_user_is_never_blocked(rules: Any, ending: str) -> None:
    text = "The root cause was a stale cache key; the cache test passes now.\n\n" + ending
    turn = _turn("fix the cache test", text, tools=[EDIT])
    assert asks_user(text, rules)
    verdict = _verdict(turn, rules)
    assert verdict.reached and not verdict.block and verdict.veto == "asks_user"
    assert verdict.remind  # it settled something: the next prompt carries a reminder (gate/gates/writeback/reminder.py)


@pytest.mark.parametrize("ending", ["Want me to commit this?", "完成！要 commit 嗎？", "Anything else?"])
def test_a_courtesy_question_after_finished_work_waits_on_nobody(rules: Any, ending: str) -> None:
    text = "The root cause was a stale cache key; I fixed it by keying on the locale and it works now.\n\n" + ending
    assert not asks_user(text, rules)
    assert _verdict(_turn("fix the cache test", text, tools=[EDIT]), rules).block


@pytest.mark.parametrize(
    "tool",
    [
        ("Edit", {"file_path": "/repo/CLAUDE.md", "old_string": "", "new_string": "- tests need TZ=UTC"}, "ok", False),
        ("Write", {"file_path": "/repo/.claude/skills/pr/SKILL.md", "content": "…"}, "ok", False),
        ("Bash", {"command": "echo '- the port is 5433' >> notes/dev-env.md"}, "", False),
        ("mcp__memory__create_entities", {"entities": []}, "ok", False),
    ],
)
def test_a_turn_that_wrote_the_lesson_down_itself_is_not_blocked(rules: Any, tool: Any) -> None:
    turn = _turn("fix the flaky test", "The root cause was the timezone; the test passes now. I noted it down.",
                 tools=[EDIT, tool])
    assert wrote_notes(turn, rules)
    verdict = _verdict(turn, rules)
    assert verdict.reached and verdict.veto == "wrote_notes" and not verdict.block


def test_explanation_only_answers_and_machine_prompts_are_not_blocked(rules: Any) -> None:
    chat = _turn("what does useTemplateRef do?", "You're right, useTemplateRef returns a ref bound to the element.")
    signals = turn_signals(chat, rules)
    assert signals.get("explanation_only") and signals.get("concedes")
    assert not _verdict(chat, rules).block
    # ... but a decision stated without a tool is still a decision
    stated = _turn("SQLite or Postgres?", "We decided to keep SQLite because the CLI must run offline.")
    assert _verdict(stated, rules).block
    notice = _turn("<task-notification> <task-id>b1</task-id> chunk 3 done </task-notification>",
                   "The root cause was a timeout; waiting for the next chunk.", tools=[EDIT])
    verdict = _verdict(notice, rules)
    assert verdict.veto == "machine_prompt" and not verdict.block


def test_the_weights_and_threshold_are_data(rules: Any) -> None:
    turn = _turn("fix the rounding test", "The root cause was ROUND_UP; I switched to ROUND_HALF_EVEN. It passes now.",
                 tools=[EDIT])
    verdict = _verdict(turn, rules)
    assert verdict.block and verdict.contributions["fix"] == rules["score"]["weights"]["fix"]
    stricter = {**rules, "score": {**rules["score"], "threshold": verdict.score + 0.01}}
    features = {**find_evidence(turn, rules).features, **turn_signals(turn, rules)}
    assert not decide(features, stricter).block
    lighter = {**rules, "score": {**rules["score"], "weights": {**rules["score"]["weights"], "fix": 0.0}}}
    assert decide(features, lighter).score == pytest.approx(verdict.score - rules["score"]["weights"]["fix"])
