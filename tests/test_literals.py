"""gate/literals.py: a pattern's required strings are a necessary condition — whenever the regex matches, the
prefilter says it could. Checked for every regex the shipped rules hold, on text built from their own words."""

from __future__ import annotations

import random
import re
import tomllib
from pathlib import Path

import pytest

from gate.literal_analysis import literal_table, required_literals
from gate.literals import LazyPattern, lazy_patterns

RULES = Path(__file__).parent.parent / "rules"
DATA = Path(__file__).parent / "data"


def _rule_patterns() -> list[str]:
    found: list[str] = []
    for path in sorted(RULES.glob("*.toml")):
        table = literal_table(tomllib.loads(path.read_text(encoding="utf-8")))
        found += [pattern for pattern in table if any(ch in pattern for ch in "\\()[]|?*+^$")]
    return found


PATTERNS = _rule_patterns()


def _texts() -> list[str]:
    rng = random.Random(11)
    # the patterns' own words, Latin and Chinese (runs of Han characters), and their single characters
    han = {w for p in PATTERNS for w in re.findall(r"[\u4e00-\u9fff]{1,4}", p)}
    words = sorted(
        {w for p in PATTERNS for w in re.findall(r"[A-Za-z]{2,}", p)} | han | {ch for w in han for ch in w}
        | {w for p in PATTERNS for w in re.findall(r"[A-Za-zÀ-ÿ]*[À-ÿ][A-Za-zÀ-ÿ]*", p)}
        | {"the", "we", "it", "1", "42", "é", "à", "É", "À", "Ç"}
    )
    glue = [" ", " ", " ", ", ", ". ", "\n", "-", "'", "’", "~", "%", " 3 ", "ms ", "ſ", "É", "İ", "ı", "\u212a", "—"]
    texts = [
        turn.read_text(encoding="utf-8", errors="replace")[:4000] for turn in sorted((DATA / "stop_turns").glob("*"))
    ]
    for _ in range(3000):
        parts = [rng.choice(words) + rng.choice(glue) for _ in range(rng.randint(1, 8))]
        text = "".join(parts)
        if rng.random() < 0.2:  # the look-alikes re.IGNORECASE matches to ASCII letters, inside words
            text = text.replace("s", "ſ").replace("i", "ı").replace("k", "\u212a").replace("I", "İ")
        texts.append(text.upper() if rng.random() < 0.15 else text.title() if rng.random() < 0.15 else text)
    return texts


def test_the_shipped_rules_mostly_have_prefilters() -> None:
    assert len(PATTERNS) > 100
    with_literals = [p for p in PATTERNS if required_literals(p) is not None]
    assert len(with_literals) / len(PATTERNS) > 0.85


@pytest.mark.parametrize("flags", [re.IGNORECASE, re.MULTILINE, 0])
def test_a_match_always_passes_the_prefilter(flags: int) -> None:
    texts = _texts()
    checked = 0
    for source in PATTERNS:
        regex = re.compile(source, flags)
        lazy = LazyPattern(source, flags, required_literals(source))
        for text in texts:
            if regex.search(text):
                checked += 1
                assert lazy.could_match(text), (source, text[:200])
                assert lazy.search(text).span() == regex.search(text).span()
            elif lazy.literals and not lazy.could_match(text):
                assert lazy.search(text) is None
    assert checked > 500  # the texts do exercise the patterns


@pytest.mark.parametrize(
    ("pattern", "groups"),
    [
        (r"\broot[- ]cause\b", [["cause"], ["root"]]),  # both required, the rarer-looking first
        (r"\b(?:we|i)\s+(?:decided|chose)\b.{0,9}\b(?:because|since)\b", [["chose", "decided"], ["because", "since"]]),
        (r"(?i)\bFAIL(?:ED)?\b", [["fail"]]),
        (r"\b(?:a|b)c", None),  # nothing as long as MIN_LITERAL is required
        (r"x*", None),
        (r"(", None),  # does not parse: no prefilter, and compiling it fails quietly
    ],
)
def test_required_literals(pattern: str, groups: list[list[str]] | None) -> None:
    found = required_literals(pattern)
    assert (found[0] if found else None) == groups


def test_a_broken_pattern_costs_itself_only() -> None:
    patterns = lazy_patterns(["(", r"\bok\b"], re.IGNORECASE, {})
    assert [bool(p.search("it is OK now")) for p in patterns] == [False, True]


@pytest.mark.parametrize("damaged", [["FAIL"], [["FAIL"], False], [[[""]], False], "x", [[[1]], True], None])
def test_a_damaged_table_entry_means_no_prefilter(damaged: object) -> None:
    pattern = LazyPattern(r"\bFAIL(?:ED)?\b", 0, damaged)  # type: ignore[arg-type]
    assert pattern.literals == () and pattern.search("it FAILED").group(0) == "FAILED"


def test_rule_snapshots_hold_prefilters_and_old_ones_are_pruned(isolated_home: Path) -> None:
    import os
    import time

    from gate import rules as rules_module

    directory = Path(isolated_home, "cache", "rules")
    directory.mkdir(parents=True)
    old = directory / "writeback-00000000-1-v1.json"
    old.write_text("{}")
    week_ago = time.time() - rules_module.STALE_SNAPSHOT_SECONDS - 60
    os.utime(old, (week_ago, week_ago))
    recent = directory / "writeback-11111111-1-v3.json"  # another project's, in use
    recent.write_text("{}")
    rules_module._load.cache_clear()
    table = rules_module.load_rules("writeback")
    pattern = table["fix"]["patterns"][0]
    assert table.literals[pattern] is not None
    assert "Edit" in table["fix"]["tools"]["edit_tools"] and "Edit" not in table.literals  # plain words: left out
    assert not old.exists() and recent.exists()
    rules_module._load.cache_clear()


def test_the_fold_table_is_every_look_alike_ignorecase_knows() -> None:
    """IGNORECASE_FOLD must hold every character beyond ASCII that re.IGNORECASE matches to an ASCII letter."""
    import string
    import sys

    from gate.literals import IGNORECASE_FOLD

    any_letter = re.compile("[a-z]", re.IGNORECASE)
    matching = [chr(code) for code in range(128, sys.maxunicode + 1) if any_letter.fullmatch(chr(code))]
    found = {
        ord(char): letter
        for char in matching
        for letter in string.ascii_lowercase
        if re.fullmatch(letter, char, re.IGNORECASE)
    }
    assert found == IGNORECASE_FOLD


def test_a_changed_private_parser_means_no_prefilter(monkeypatch: pytest.MonkeyPatch) -> None:
    """The analysis rides on re's private parser; if a Python release changes it, rules still load."""
    from re import _parser

    def broken(*args: object, **kwargs: object) -> None:
        raise AttributeError("changed")

    monkeypatch.setattr(_parser, "parse", broken)
    assert required_literals(r"\broot cause\b") is None
    assert literal_table({"fix": {"patterns": [r"\broot cause\b"]}}) == {r"\broot cause\b": None}


@pytest.mark.parametrize("flags", [re.IGNORECASE, re.MULTILINE, 0])
def test_patterns_built_from_the_snapshots_prefilters_are_the_ones_built_from_the_literals(
    flags: int, isolated_home: Path
) -> None:
    """The rules snapshot keeps what prefilter() makes of each pattern's literals: a LazyPattern built from it
    holds the same strings, and says the same of every text, as one built from the literals themselves."""
    from gate import rules as rules_module
    from gate.literals import prefilter

    rules_module._load.cache_clear()
    built = rules_module.load_rules("writeback")  # parsed, then kept
    rules_module._load.cache_clear()
    kept = rules_module.load_rules("writeback")  # read back from the snapshot
    rules_module._load.cache_clear()
    assert kept == built and kept.literals == built.literals and kept.prefilters == built.prefilters
    assert kept.prefilters and set(kept.prefilters) == set(kept.literals)
    texts = _texts()[:400]
    damaged = {"a": [[["x"]], False, "extra"], "b": None, "c": [[[]], False], "d": [[["ok", 3]], True]}
    for source, entry in [*kept.literals.items(), *damaged.items()]:
        plain = LazyPattern(source, flags, entry)
        prepared = LazyPattern(source, flags, kept.prefilters.get(source, prefilter(entry)), prepared=True)
        assert (prepared.literals, prepared.ignore_case) == (plain.literals, plain.ignore_case), source
        assert [prepared.could_match(t) for t in texts] == [plain.could_match(t) for t in texts], source
    sources = list(kept.literals)
    from_prefilters = lazy_patterns(sources, flags, kept.literals, kept.prefilters)
    from_literals = lazy_patterns(sources, flags, kept.literals)
    assert [(p.literals, p.ignore_case) for p in from_prefilters] == [
        (p.literals, p.ignore_case) for p in from_literals
    ]


def test_the_lowered_text_kept_for_the_next_pattern_is_the_texts_own() -> None:
    first = LazyPattern(r"root cause", re.IGNORECASE, [[["root cause"]], False])
    second = LazyPattern(r"turns? out", re.IGNORECASE, [[["turn"]], False])
    assert first.could_match("The ROOT Cause was X") and not second.could_match("The ROOT Cause was X")
    assert second.could_match("It TURNS out") and not first.could_match("It TURNS out")
    assert first.could_match("The ROOT Cause was X")  # another text in between: lowered again, not confused
