"""The words that say nothing in this project (issue 29): prompt terms weighed by how many of its prompts use them."""

from __future__ import annotations

import json
from pathlib import Path

from gate.paths import ProjectPaths
from gate.session.prompt_terms import MAX_TERMS, PromptTerms, damping, table_file, weights

RULES = {"common_share": 0.2, "least_weight": 0.2, "min_prompts": 4, "store_weight": 0.5}


def test_the_table_counts_each_prompt_once_and_survives_a_reload(project: Path) -> None:
    paths = ProjectPaths.for_cwd(str(project))
    table = PromptTerms.load(paths)
    assert table.prompts == 0
    table.add(["portal", "view", "portal"])
    table.add(["portal", "invoice"])
    again = PromptTerms.load(paths)
    assert again.prompts == 2 and again.terms == {"portal": 2, "view": 1, "invoice": 1}
    assert again.share("portal") == 1.0 and again.share("never") == 0.0


def test_a_broken_table_starts_over_instead_of_failing(project: Path) -> None:
    paths = ProjectPaths.for_cwd(str(project))
    Path(table_file(paths)).parent.mkdir(parents=True, exist_ok=True)
    Path(table_file(paths)).write_text("{not json")
    assert PromptTerms.load(paths).prompts == 0
    Path(table_file(paths)).write_text(json.dumps({"version": 1, "prompts": "many", "terms": {}}))
    assert PromptTerms.load(paths).prompts == 0


def test_a_term_most_prompts_use_weighs_less_and_a_rare_one_keeps_its_weight(project: Path) -> None:
    table = PromptTerms(str(project / "t.json"), 10, {"portal": 9, "view": 4, "invoice": 1})
    factors = weights(["portal", "view", "invoice"], table, (), RULES)
    assert "invoice" not in factors  # one prompt in ten: a topic
    assert factors["portal"] < factors["view"] < 1
    assert factors["portal"] >= RULES["least_weight"]
    assert damping(0.2, RULES) == 1.0 and damping(0.4, RULES) < 1.0


def test_a_new_project_weighs_by_the_store_until_it_has_counted_enough_prompts(project: Path) -> None:
    young = PromptTerms(str(project / "t.json"), 2, {"portal": 2, "invoice": 2})
    assert weights(["portal", "invoice"], young, {"portal"}, RULES) == {"portal": 0.5}
    grown = PromptTerms(str(project / "t.json"), 10, {"portal": 10, "invoice": 1})
    assert set(weights(["portal", "invoice"], grown, {"invoice"}, RULES)) == {"portal"}


def test_the_table_stays_small(project: Path) -> None:
    table = PromptTerms(str(project / "t.json"), 1, {f"once{i}": 1 for i in range(MAX_TERMS)} | {"twice": 2})
    table.add(["fresh"])
    assert len(table.terms) <= MAX_TERMS and table.terms["twice"] == 2


def test_the_recall_gate_counts_the_prompts_and_damps_what_most_of_them_say(project: Path, hook) -> None:
    from test_hooks import audit, event

    rules = project / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "recall.toml").write_text("[prompt_terms]\nmin_prompts = 4\n")
    for topic in ["invoice totals", "refund emails", "tax rounding", "login banner"]:
        hook(event(project, "UserPromptSubmit", prompt=f"in the portal, fix the {topic} please"))
    table = PromptTerms.load(ProjectPaths.for_cwd(str(project)))
    assert table.prompts == 4 and table.terms["portal"] == 4
    hook(event(project, "UserPromptSubmit", prompt="in the portal, the shipping labels print blank"))
    damped = audit()[-1]["damped"]
    assert "portal" in damped and "ship" not in damped and "label" not in damped


def test_a_long_prompt_the_project_sends_word_for_word_again_and_again_is_not_searched(project: Path, hook) -> None:
    from test_hooks import audit, event

    from gate.memory.model import Memory
    from gate.memory.store.store import Store

    store = Store.for_cwd(str(project))
    store.remember(Memory(id="m-observe", kind="finding", title="Observation patterns go to the instincts folder"))
    scripted = ("Read the observations file and identify patterns; if you find three occurrences of one pattern "
                "create an instinct file following the observer format")
    reasons = []
    for session in ("s-1", "s-2", "s-3", "s-4"):
        hook(event(project, "UserPromptSubmit", session=session, prompt=scripted))
        reasons.append(audit()[-1]["reason"])
    assert "SKIP_SCRIPTED_PROMPT" not in reasons[:2] and reasons[2:] == ["SKIP_SCRIPTED_PROMPT"] * 2
    hook(event(project, "UserPromptSubmit", session="s-5", prompt="identify patterns in the observations file"))
    assert audit()[-1]["reason"] != "SKIP_SCRIPTED_PROMPT"  # the user's own words about it are searched


def test_the_fingerprint_ignores_spacing_and_case() -> None:
    from gate.session.prompt_terms import fingerprint

    assert fingerprint("Run  the\nobserver") == fingerprint("run the observer")
    assert fingerprint("run the observer") != fingerprint("run the observers")
