"""scripts/train_writeback.py --words (issue 43): the word features of a turn, and the vocabulary chosen inside each
leave-one-owner-out fold from the training owners only. Synthetic turns written for these tests; no corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support import load_script

REPO = Path(__file__).resolve().parents[1]


def _trainer() -> Any:
    return load_script("train_writeback")


def test_word_set_tags_reply_and_prompt_apart_and_drops_numbers() -> None:
    t = _trainer()
    words = t.word_set("Fixed the FLAKY test; it's 42 done.", "Why does CI fail?")
    assert {"r:fixed", "r:flaky", "r:it's", "r:done", "p:why", "p:ci", "p:fail"} <= words
    assert "r:42" not in words and "p:fixed" not in words and "r:why" not in words
    assert not any(" " in w for w in words)
    pairs = t.word_set("Fixed the FLAKY test", "", bigrams=True)
    assert {"r:fixed the", "r:the flaky", "r:flaky test"} <= pairs


def test_owner_family_is_the_folder_name_before_plus() -> None:
    t = _trainer()
    assert t.owner_family("acme+cli/projects/x/s.jsonl") == "acme"
    assert t.owner_family("acme+skills/s.jsonl") == t.owner_family("acme+cli/s.jsonl")
    assert t.owner_family("solo/s.jsonl") == "solo"


def test_select_vocabulary_ranks_by_association_and_cuts_rare_and_one_owner_words() -> None:
    t = _trainer()
    rows = []
    for i in range(20):
        block = i < 5
        words = {"r:common"} | ({"r:learned"} if block else set()) | ({"r:noise"} if i % 2 else set())
        if block and i < 2:
            words.add("r:rare")  # two turns only: under min_df 3
        rows.append((f"o{i % 3}", frozenset(words), block))
    rows.append(("solo", frozenset({"r:mine", "r:learned"}), True))
    rows += [("solo", frozenset({"r:mine"}), True) for _ in range(3)]
    for select in ("chi2", "logodds"):
        vocabulary = t.select_vocabulary(rows, 2, min_df=3, min_owners=2, select=select)
        assert vocabulary[0] == "r:learned", select
        assert "r:rare" not in t.select_vocabulary(rows, 10, min_df=3, min_owners=2, select=select)
        assert "r:mine" not in t.select_vocabulary(rows, 10, min_df=3, min_owners=2, select=select)
        assert "r:mine" in t.select_vocabulary(rows, 10, min_df=3, min_owners=1, select=select)
    assert t.select_vocabulary(rows, 0) == []


def test_each_fold_chooses_its_vocabulary_without_the_held_out_owner() -> None:
    t = _trainer()
    live = []
    for owner in ("a", "b", "c"):
        for i in range(12):
            block = i < 3
            words = {"r:ok", "r:learned"} if block else {"r:ok"}
            if owner == "a" and block:
                words.add("r:zebra")  # only owner a's blocking turns say it
            live.append((owner, {"x": 1.0 if i % 2 else 0.0}, frozenset(words), block))
    setup = t.WordSetup(k=5, l2=0.1, min_df=1, min_owners=1)
    folds = t.leave_one_owner_out(live, ["x"], setup)
    assert sorted(folds) == ["a", "b", "c"]
    assert "r:zebra" not in folds["a"][0]  # a held out: its words never pick the vocabulary
    assert "r:zebra" in folds["b"][0] and "r:zebra" in folds["c"][0]
    assert all("r:learned" in folds[o][0] for o in folds)
    # held-out turns are each scored once, by their fold's model: "learned" transfers, so they block
    assert [y for y, _ in folds["a"][1]] == [r[3] for r in live if r[0] == "a"]
    assert all(blocked == y for o in folds for y, blocked in folds[o][1])


def test_fit_sparse_minimises_the_same_objective_as_fit() -> None:
    t = _trainer()
    data = [({"a": 1.0}, True), ({"a": 2.0}, True), ({"b": 1.0}, False), ({}, False),
            ({"a": 1.0}, False), ({"b": 3.0}, False), ({}, False)]
    names = ["a", "b"]
    dense = t.fit(data, names, 0.05)
    rows = t.sparse_rows([f for f, _ in data], [frozenset()] * len(data), names)
    sparse = t.fit_sparse(rows, [y for _, y in data], 3, 0.05)
    assert all(abs(d - s) < 1e-3 for d, s in zip(dense, sparse, strict=True)), (dense, sparse)
    assert sparse[1] > 0 > sparse[2]


def test_compare_rankings_scores_the_shipped_table_as_is_and_learned_ones_on_held_out_owners() -> None:
    """A weight the shipped table does not give ("conclusion" = 0) carries the label; the shipped table's own
    weight ("edits") points the wrong way. The learned table, fitted without the held-out owner, ranks that owner's
    turns right; the shipped table ranks them backwards — and the comparison says so, per owner and pooled."""
    from gate.rules import load_rules

    t = _trainer()
    rows = []
    for owner in ("a", "b", "c"):
        for i in range(6):
            rows.append((owner, {"conclusion": 1.0}, True, ("", "")))
            rows.append((owner, {"edits": float(1 + i % 5)}, False, ("", "")))
    result = t.compare_rankings(rows, load_rules("writeback"), [0.05])
    assert list(result) == ["shipped", "learned l2=0.05"]
    assert result["shipped"]["pooled"] == 0.0
    assert result["learned l2=0.05"]["pooled"] == 1.0
    assert all(result["learned l2=0.05"][o] == 1.0 for o in ("a", "b", "c"))


def test_the_shipped_writeback_table_ranks_held_out_owners_best_on_the_saved_dev_figures() -> None:
    """CI's check that the shipped [score] table is what training produces: on the saved leave-one-owner-out
    rankings of the dev split (eval/fits/writeback.json, `train_writeback.py --compare … --save`), no learned
    table ranks a held-out owner's turns better than the shipped one. When one does, it is the one to ship."""
    import json

    t = _trainer()
    saved = json.loads((REPO / "eval" / "fits" / "writeback.json").read_text(encoding="utf-8"))["auc"]
    assert "shipped" in saved and len(saved) > 1
    assert t.ranks_best(saved) == "shipped", (
        f"{t.ranks_best(saved)} ranks dev's held-out owners better: ship it (train_writeback.py --write)")


def test_ranks_best_prefers_the_shipped_table_on_a_tie() -> None:
    t = _trainer()
    assert t.ranks_best({"learned l2=0.1": {"pooled": 0.7}, "shipped": {"pooled": 0.7}}) == "shipped"
    assert t.ranks_best({"learned l2=0.1": {"pooled": 0.71}, "shipped": {"pooled": 0.7}}) == "learned l2=0.1"
