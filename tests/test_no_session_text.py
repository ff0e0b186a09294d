"""Other people's text stays out of the repository: no run of eight words (or of eight Chinese or Japanese
characters) of what the corpus's sessions say appears in a file gate keeps — rules, code, tests, docs, eval —
unless the sessions of several owners hold it (then it is the tools' words, not a person's).

Examples in rules' comments and tests are written, not copied: a helper that quotes the prompt a rule was tuned
on fails here. Skipped where the corpus is not beside the checkout (../shared/corpora, as for the figures of
tests/test_labelled_sets.py). Ids, line numbers and verdicts are not text and are not looked for.
"""

from __future__ import annotations

import ast
import gzip
import io
import json
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SESSIONS = REPO.parent / "shared" / "corpora" / "sessions"
WORDS = 8  # a run of eight words is a quote, not a phrase the language shares
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_UNSPACED = re.compile(f"[{_CJK}]")
_TOKEN = re.compile(f"[{_CJK}]|[^\\W\\d_{_CJK}]+")
# A run that the sessions of several owners hold is the tools' own words (Claude Code's caveats and summaries, an
# exporter's markup, a linter's message), not somebody's text: it is found at run time, not written down here.
SHARED_BY = 3
KEPT = ("rules", "gate", "tests", "docs", "eval", "scripts", "bench", "README.md")
# The delivery stores are the annotators' memories of the sessions (eval/README.md): written for them, they name
# the commands, files and tools the sessions use, as a memory must. Not checked here, and known.
# The converters' tests hold the export formats themselves (their headers, markup and the CLI's own messages,
# which every session repeats), so their fixtures are not checked either: read them when they change.
# The annotators' queries (eval/annotations/queries/) name what the session names, in two to eight words: that
# is what a search in the agent's own words is.
NOT_CHECKED = ("eval/stores/", "tests/test_corpus_convert.py", "eval/annotations/queries/")


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _texts(path: Path) -> list[str]:
    """A session file's strings: a compressed transcript (`.jsonl.gz`) read decompressed."""
    if path.name.endswith(".jsonl.gz"):
        with gzip.open(path, "rb") as handle:
            return _texts_of_lines(handle.read().decode("utf-8", errors="replace"))
    raw = path.read_text(encoding="utf-8", errors="replace")
    return _texts_of_lines(raw) if path.suffix == ".jsonl" else [raw]


def _runs(text: str) -> list[str]:
    """The runs a quote would share: eight tokens in a row — a word, or one character of a script written
    without spaces, so a Chinese sentence with code names in it counts as one — of which six are such a character
    or a word of three letters or more (what ids, hashes and tool output are made of — "a eb ec", "n failed
    passed in s" — is not a sentence)."""
    tokens = [t.lower() for t in _TOKEN.findall(text)]
    out = []
    for i in range(len(tokens) - WORDS + 1):
        window = tokens[i : i + WORDS]
        if sum(len(t) >= 3 or _UNSPACED.fullmatch(t) is not None for t in window) >= WORDS - 2:
            out.append(" ".join(window))
    return out


def _shingles(text: str) -> set[int]:
    return {hash(run) for run in _runs(text)}


def _prose(path: Path, text: str) -> list[str]:
    """What in a repository file could be a quote: a Python file's strings and comments (its code shares
    idioms with the code in the sessions), a JSON-lines file's values that hold a space (not ids or paths)."""
    if path.suffix == ".py":
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        except (tokenize.TokenError, SyntaxError):
            return [text]
        return [_literal(t.string) if t.type == tokenize.STRING else t.string
                for t in tokens if t.type in (tokenize.STRING, tokenize.COMMENT)]
    if path.suffix == ".jsonl":
        return [s for s in _texts_of_lines(text) if any(ch.isspace() for ch in s.strip())]
    return [text]


def _literal(source: str) -> str:
    """A string literal's text with its escapes read (a "\\n" is a line break, as in the sessions); an f-string
    as written."""
    try:
        value = ast.literal_eval(source)
    except (ValueError, SyntaxError):
        return source
    return value if isinstance(value, str) else source


def _texts_of_lines(raw: str) -> list[str]:
    out: list[str] = []
    for line in raw.splitlines():
        try:
            out.extend(_strings(json.loads(line)))
        except ValueError:
            out.append(line)
    return out


def _quotes(path: Path, text: str, seen: set[int]) -> list[str]:
    """Runs of the file that one or two owners' sessions hold."""
    return [run for part in _prose(path, text) for run in _runs(part) if hash(run) in seen]


@pytest.mark.skipif(not SESSIONS.is_dir(), reason="the corpus is not beside the checkout (../shared/corpora)")
def test_no_run_of_the_sessions_text_is_in_the_repository() -> None:
    owners: dict[int, int] = {}  # run -> how many owners' sessions hold it
    for owner in sorted(p for p in SESSIONS.iterdir() if p.is_dir()):
        runs: set[int] = set()
        for path in sorted(owner.rglob("*")):
            if path.is_file():
                for text in _texts(path):
                    runs |= _shingles(text)
        for run in runs:
            owners[run] = owners.get(run, 0) + 1
    seen = {run for run, count in owners.items() if count < SHARED_BY}
    tracked = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", *KEPT], capture_output=True, check=True)
    leaks: dict[str, list[str]] = {}
    for name in tracked.stdout.decode().split("\0"):
        path = REPO / name
        if not name or not path.is_file() or path.suffix in {".png", ".gz", ".pyc"} or \
                name.startswith(NOT_CHECKED):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        quotes = _quotes(path, text, seen)
        if quotes:
            leaks[name] = sorted(set(quotes))[:5]
    assert not leaks, f"text of the corpus's sessions in the repository (write an example instead): {leaks}"
