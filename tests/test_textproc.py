"""The query side's analysis (gate.textproc, standard library + PyStemmer) and the index's (tantivy) agree.

The hook analyses prompts without importing tantivy (its import alone costs a process ~5 ms); documents are
indexed by tantivy's analyzer. A term that came out differently on the two sides would never match, so this
holds them to the same output over realistic text: the labelled prompts and replies, generated memories,
code, and text in other scripts.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from bench.corpus import Generator
from gate.memory.index.analyzer import analyzer
from gate.textproc import expand_identifiers, terms, tokens

DATA = Path(__file__).parent / "data"
RULES = Path(__file__).parent.parent / "rules"

OTHER_SCRIPTS = [
    "Die Größe der Straße ändert sich; naïve café résumé façade coöperate",
    "Ünïcödé ÀÉÎÕÜ İstanbul ıi ǅungla ΣΊΣΥΦΟΣ σοφός",
    "Индексация документов и поиск по ключевым словам",
    "検索インデックスの再構築 中文分词 한국어 텍스트",
    "emoji 🚀 deploys✅ fixed—finally… “quoted” ‘single’ «guillemets»",
    "x²+y³ ½ Ⅻ ٣٤ ๓๔ numbers１２３ full-width ＡＢＣ",
    "combining: e\u0301te\u0301 n\u0303 a\u0308 zero\u200bwidth\u00a0nbsp tab\tend",
    "a" * 39 + " " + "b" * 40 + " " + "c" * 41 + " " + "é" * 20 + " " + "é" * 21,
]


def _texts() -> list[str]:
    texts = list(OTHER_SCRIPTS)
    for name in ("topic_sessions.toml", "topic_sessions_heldout.toml"):
        data = tomllib.loads((DATA / name).read_text(encoding="utf-8"))
        for session in data["session"]:
            for turn in session["turn"]:
                texts += [turn["prompt"], turn.get("reply", ""), " ".join(turn.get("files", []))]
    for memory in Generator(400, seed=11).memories():
        texts += [memory["title"], memory["body"], " ".join(memory["tags"])]
    for path in sorted(RULES.glob("*.toml")) + sorted(Path(__file__).parent.parent.joinpath("gate").rglob("*.py")):
        texts += path.read_text(encoding="utf-8").split("\n\n")
    return [t for t in texts if t]


def test_tokens_match_the_index_analyzer_on_realistic_text() -> None:
    texts = _texts()
    assert len(texts) > 2000
    differing = [(text[:80], tokens(text), analyzer().analyze(text)) for text in texts
                 if tokens(text) != analyzer().analyze(text)]
    assert not differing, differing[:5]


def test_words_stem_alike_one_by_one() -> None:
    """Every distinct word of the corpus, alone: differences in the stemmers would show here first."""
    words = sorted({w for text in _texts() for w in re.findall(r"[^\W_]+", text)})
    assert len(words) > 5000
    differing = [(w, tokens(w), analyzer().analyze(w)) for w in words if tokens(w) != analyzer().analyze(w)]
    assert not differing, differing[:10]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Running the indexes", ["run", "index"]),
        ("parseHTTPConfig2 failed", ["parsehttpconfig2", "fail", "pars", "http", "config"]),
        ("the and of 42 x", []),
        ("", []),
    ],
)
def test_terms(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


def test_identifiers_keep_whole_and_parts() -> None:
    assert expand_identifiers("call reserveAccount now") == "call reserveAccount now reserve Account"
