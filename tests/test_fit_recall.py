"""scripts/fit_recall.py (issue 43): the recall decision chosen by owner, held out one at a time. The choice rule on
figures written here, and the shipped rules/recall.toml against the saved dev figures (no corpus needed)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from support import load_script

REPO = Path(__file__).resolve().parents[1]


def _fitter() -> Any:
    return load_script("fit_recall")


def _row(asks: int, expected: int, reached: int, shown: int, relevant: int, prompts: int = 100) -> dict[str, int]:
    return {"asks": asks, "prompts": prompts, "expected": expected, "reached_at_prompt": reached, "shown": shown,
            "shown_relevant": relevant, "noise": 0}


def test_a_candidate_is_chosen_only_when_it_delivers_more_without_more_asks_or_less_precision() -> None:
    f = _fitter()
    figures = {
        "shipped": {"a": _row(50, 100, 40, 100, 20), "b": _row(50, 100, 40, 100, 20)},
        "more asks": {"a": _row(70, 100, 60, 100, 20), "b": _row(70, 100, 60, 100, 20)},  # more, at a cost
        "less precise": {"a": _row(40, 100, 50, 200, 20), "b": _row(40, 100, 50, 200, 20)},
        "better": {"a": _row(40, 100, 45, 100, 21), "b": _row(45, 100, 45, 100, 20)},
    }
    assert f.choose(figures, ["a", "b"]) == "better"
    assert f.choose({k: v for k, v in figures.items() if k != "better"}, ["a", "b"]) == "shipped"


def test_leave_one_owner_out_scores_each_owner_by_the_choice_made_on_the_others() -> None:
    f = _fitter()
    figures = {
        "shipped": {"a": _row(50, 100, 40, 100, 20), "b": _row(50, 100, 40, 100, 20)},
        # better on a, worse on b: chosen when b is held out (trained on a), not when a is
        "a only": {"a": _row(50, 100, 60, 100, 30), "b": _row(50, 100, 10, 100, 5)},
    }
    result = f.leave_one_owner_out(figures)
    assert result["folds"] == {"a": "shipped", "b": "a only"}
    assert result["held_out"]["at_prompt"] == 0.25  # a by shipped (40) + b by "a only" (10), of 200
    assert result["shipped"]["at_prompt"] == 0.4


def _values(table: dict[str, Any]) -> list[tuple[str, Any]]:
    out = []
    for key, value in table.items():
        if isinstance(value, dict):
            out += [(f"{key}.{k}", v) for k, v in _values(value)]
        else:
            out.append((key, value))
    return out


def test_the_shipped_recall_rules_are_the_choice_on_the_saved_dev_figures() -> None:
    """CI's check that the shipped table is what the fit produces: the candidate chosen on every dev owner's saved
    figures (eval/fits/recall.json, written by `fit_recall.py --save`) has its values in rules/recall.toml."""
    f = _fitter()
    saved = json.loads((REPO / "eval" / "fits" / "recall.json").read_text(encoding="utf-8"))
    candidates = {c["name"]: c for c in tomllib.loads(
        (REPO / "eval" / "fits" / "recall-candidates.toml").read_text(encoding="utf-8"))["candidate"]}
    assert set(saved["figures"]) == set(candidates), "eval/fits/recall.json is not of these candidates: re-run"
    chosen = f.leave_one_owner_out(saved["figures"])["chosen_on_all"]
    shipped = tomllib.loads((REPO / "rules" / "recall.toml").read_text(encoding="utf-8"))
    for key, value in _values({k: v for k, v in candidates[chosen].items() if k != "name"}):
        section = shipped
        for part in key.split("."):
            section = section[part]
        assert section == value, f"{chosen!r} is chosen on dev: rules/recall.toml should have {key} = {value}"
