"""The recall gate beyond topic shifts (issue 17), through the real hook process: a prompt on the current topic
that names a memory not yet delivered brings it; one that names only what was delivered, or nothing, stays
silent without opening the index; the project's own path words and a pasted path's folders weigh nothing;
Chinese prompts are searched by character pairs; task notifications are not prompts."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gate.gates.recall import prompt as analysis
from gate.paths import audit_log_file
from gate.rules import load_rules
from gate.textproc import terms

Hook = Callable[..., tuple[str, int]]
Gate = Callable[..., tuple[int, str, str]]


def _remember(gate: Gate, title: str, *args: str) -> str:
    code, out, err = gate("remember", title, *args, "--json")
    assert code == 0, err
    return str(json.loads(out)["id"])


def _prompt(hook: Hook, project: Path, text: str, session: str = "relevance") -> dict[str, Any]:
    out, code = hook({"session_id": session, "transcript_path": str(project / "none.jsonl"), "cwd": str(project),
                      "hook_event_name": "UserPromptSubmit", "prompt": text})
    assert code == 0
    return json.loads(Path(audit_log_file()).read_text().splitlines()[-1])


@pytest.fixture
def store(gate: Gate) -> dict[str, str]:
    return {
        "waterfall": _remember(gate, "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision"),
        "rounding": _remember(gate, "Invoice rounding uses ROUND_HALF_EVEN in the billing exporter",
                              "--kind", "gotcha"),
        "refund": _remember(gate, "Refund exports batch by settlement date, not by invoice date",
                            "--kind", "decision", "--cues", "refunds arrive a day late, wrong day in the refund CSV"),
    }


def test_a_prompt_that_names_an_undelivered_memory_brings_it(project: Path, store: dict[str, str], hook: Hook) -> None:
    first = _prompt(hook, project, "How does the billing exporter compute invoice totals for the ledger?")
    assert first["reason"] == "FIRED_SESSION_START"
    # Same topic (billing, invoices), so no shift — but it names the refund memory by its cue words.
    named = _prompt(hook, project, "and the billing exporter: why does the refund CSV show the wrong day?")
    assert named["reason"] == "FIRED_RELEVANT" and store["refund"] in named["delivered"], named
    assert named["shift"] is False and named["named_pairs"] >= 1


def test_a_follow_up_that_names_only_what_was_delivered_opens_no_index(
    project: Path, store: dict[str, str], hook: Hook
) -> None:
    first = _prompt(hook, project, "When does the reserve account waterfall trigger?")
    assert store["waterfall"] in first["delivered"]
    again = _prompt(hook, project, "And the reserve waterfall trigger for overdue days?")
    assert again["reason"] == "SKIP_NO_SHIFT" and "named_pairs" not in again and "trace" not in again, again


def test_the_projects_own_path_words_and_a_pasted_paths_folders_weigh_nothing(tmp_path: Path) -> None:
    rules = load_rules("topic_shift")
    root = str(tmp_path / "work" / "shopfloor-erp")
    noise = analysis.project_words(root)
    assert {"shopfloor", "erp"} <= noise
    prompt = f"Traceback in {root}/addons/sale_margin/views/order_view.xml: the margin column is empty"
    query = analysis.query_terms(prompt, rules, noise)
    assert "shopfloor" not in query and "erp" not in query and "addon" not in query  # folders above the last 3
    assert {"sale", "margin", "view", "order"} <= set(query)
    windows = analysis.without_long_paths(r"see C:\Users\ana\work\shop\addons\sale\views\order.xml now", 3)
    assert "Users" not in windows and "sale" in windows and "order.xml" in windows


def test_chinese_is_searched_by_character_pairs() -> None:
    assert terms("看一下experiment config") == ["看一", "experi", "config"]  # "一下" is a stopword pair
    assert terms("確認檔案") == ["認檔", "檔案"]  # "確認" is a stopword pair


def test_task_notifications_are_not_prompts(project: Path, store: dict[str, str], hook: Hook) -> None:
    note = _prompt(hook, project, "<task-notification> <task-id>b7</task-id> <summary>refund CSV export done"
                                  "</summary> </task-notification>")
    assert note["reason"] == "SKIP_TRIVIAL_PROMPT"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))


def test_a_follow_up_brings_a_memory_only_when_it_names_it_by_several_of_its_own_words(
    project: Path, store: dict[str, str], hook: Hook
) -> None:
    """rules/recall.toml [fire] follow_up_min_terms: a follow-up that touches a memory by two words lets the pair
    filter search, but brings nothing (in a big store such hits were coincidences); the same prompt with the floor
    at 1 brings it."""
    _prompt(hook, project, "How does the billing exporter compute invoice totals for the ledger?")
    brief = _prompt(hook, project, "and the billing exporter's refund CSV?")
    assert brief["shift"] is False and brief["named_pairs"] >= 1, brief
    assert store["refund"] not in brief.get("delivered", []), brief
    (refund,) = [c for c in brief["trace"]["candidates"] if c["id"] == store["refund"]]
    assert refund["disposition"] == "BELOW_TERM_FLOOR", brief["trace"]
    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "recall.toml").write_text("[fire]\nfollow_up_min_terms = 1\n")
    _prompt(hook, project, "How does the billing exporter compute invoice totals for the ledger?", session="loose")
    loose = _prompt(hook, project, "and the billing exporter's refund CSV?", session="loose")
    assert loose["shift"] is False and store["refund"] in loose["delivered"], loose
