"""scripts/corpus/agree.py: two annotators' labels merged into the cases they agree on, each side possibly the
work of several people, each of whom labelled part of an owner's cases (synthetic ids: no session text)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "corpus"))
import agree  # the dev script, importable for its functions


def _write(folder: Path, stem: str, rows: list[tuple[str, int, bool, str]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"transcript": t, "turn": line, "n": 0, "should_block": block, "category": kind})
             for t, line, block, kind in rows]
    (folder / f"{stem}.writeback.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_each_side_may_be_several_folders_and_only_agreed_cases_are_written(tmp_path: Path) -> None:
    # side A: two people, each half of owner o's sessions; side B: two other people, halved differently
    _write(tmp_path / "a1", "o", [("o/s1.jsonl", 1, True, "fix"), ("o/s1.jsonl", 5, False, "none")])
    _write(tmp_path / "a2", "o", [("o/s2.jsonl", 3, False, "none"), ("o/s2.jsonl", 9, True, "gotcha")])
    _write(tmp_path / "b1", "o", [("o/s1.jsonl", 1, True, "decision")])
    _write(tmp_path / "b2", "o", [("o/s1.jsonl", 5, False, "none"), ("o/s2.jsonl", 3, True, "fix"),
                                  ("o/s2.jsonl", 9, True, "gotcha")])
    out = tmp_path / "labels.jsonl"
    code = agree.main(["--a", f"{tmp_path / 'a1'},{tmp_path / 'a2'}", "--b", f"{tmp_path / 'b1'},{tmp_path / 'b2'}",
                       "--owners", "o", "--rubric", "writeback", "--out", str(out)])
    assert code == 0
    labels = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(x["transcript"], x["turn"], x["block"], x.get("kind")) for x in labels] == [
        ("o/s1.jsonl", 1, True, "fix"),  # agreed to block: the first side's kind
        ("o/s1.jsonl", 5, False, None),
        ("o/s2.jsonl", 9, True, "gotcha"),
    ]  # o/s2.jsonl#3: they disagree, left out


def test_a_stem_in_none_of_the_folders_is_a_plain_error(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    with pytest.raises(SystemExit, match=r"no o\.writeback\.jsonl"):
        agree.main(["--a", str(tmp_path / "a"), "--owners", "o", "--rubric", "writeback",
                    "--out", str(tmp_path / "x.jsonl")])
