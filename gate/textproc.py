"""Text to search terms (hot path): code identifiers split, stopwords dropped, English-stemmed.

Two implementations of one analysis: the index tokenizes documents with tantivy's analyzer
(gate/memory/index/analyzer.py), and everything on the query side — search terms, the recall gate's topic
record — comes from terms() here, which does the same steps with the standard library and PyStemmer.
Both stem with Snowball English (tantivy through rust-stemmers, PyStemmer through libstemmer), and
tests/test_textproc.py checks that the two produce the same terms. The point is the hook's budget: importing
tantivy costs a process ~5 ms, PyStemmer under 1 ms, and a prompt that does not shift the topic never needs
the index.
"""

from __future__ import annotations

import Stemmer

from gate.literals import compile_cached
from gate.memo import cache  # functools.cache without functools (gate/memo.py)
from gate.rules import load_rules

TYPE_CHECKING = False  # annotations are strings; re is imported only to type them
if TYPE_CHECKING:
    import re

# tantivy's simple tokenizer: runs of alphanumeric characters (str.isalnum, i.e. \w without the underscore)
TOKEN = r"[^\W_]+"
# camelCase / PascalCase / digit boundaries: "parseHTTPConfig2" -> "parse HTTP Config 2"
CAMEL = r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])"
IDENT = r"\b[A-Za-z][A-Za-z0-9]*[a-z][A-Z][A-Za-z0-9]*\b"


# The patterns compile when first used, from the program an earlier process kept (gate/literals.py).
@cache
def _token() -> re.Pattern[str]:
    return compile_cached(TOKEN)


@cache
def _ident() -> re.Pattern[str]:
    return compile_cached(IDENT)


@cache
def _camel() -> re.Pattern[str]:
    return compile_cached(CAMEL)  # its lookbehinds cost a plain re.sub ~1 ms to compile in every process


# Scripts written without spaces between words (Han, kana, Hangul): a run of them is cut into overlapping
# two-character pieces, the usual way to search such text without a dictionary ("確認檔案" -> "確認 認檔 檔案"),
# and set apart from the Latin words beside it ("看一下config" -> "看一 一下 config"). Compiled when a text is
# not ASCII: the ranges' character set costs ~1 ms to build, which an English prompt never needs.
UNSPACED = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"


@cache
def _unspaced() -> re.Pattern[str]:
    return compile_cached(UNSPACED)


def _bigrams(match: re.Match[str]) -> str:
    run = match.group(0)
    if len(run) == 1:
        return f" {run} "
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "


def prepare(text: str) -> str:
    """Text as both analyses read it: unspaced scripts cut into pairs, camelCase identifiers expanded."""
    if not text.isascii():
        text = _unspaced().sub(_bigrams, text)
    return expand_identifiers(text)


def expand_identifiers(text: str) -> str:
    """Append the parts of camelCase identifiers so both the whole and its parts are searchable."""
    idents = _ident().findall(text)
    if not idents:
        return text
    return f"{text} {' '.join(_camel().sub(' ', ident) for ident in idents)}"


@cache
def text_rules() -> tuple[int, int, frozenset[str]]:
    """(max token length in UTF-8 bytes, min term length, stopwords) from rules/text.toml."""
    rules = load_rules("text")
    tokens = rules.get("tokens", {})
    words = frozenset(w.lower() for w in rules.get("stopwords", {}).get("words", []))
    return int(tokens.get("max_token_length", 40)), int(tokens.get("min_token_length", 2)), words


def stopwords() -> frozenset[str]:
    return text_rules()[2]


@cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def tokens(text: str) -> list[str]:
    """The analyzer's output before the term filters: tokenized, lowercased, long tokens and stopwords out,
    stemmed — what tantivy indexes for the same text."""
    max_len, _, words = text_rules()
    kept = []
    for raw in _token().findall(text):
        if raw.isascii():
            token = raw.lower()
            size = len(token)
        else:  # character by character, as tantivy lowercases (str.lower would make a final Σ a ς)
            token = "".join(char.lower() for char in raw)
            size = len(token.encode("utf-8", "surrogatepass"))
        if size <= max_len and token not in words:
            kept.append(token)
    return _stemmer().stemWords(kept)


def terms(text: str) -> list[str]:
    """Content terms of a text, in order, with repeats: stemmed, no stopwords, no bare numbers."""
    if not text:
        return []
    _, min_len, _ = text_rules()
    return [token for token in tokens(prepare(text)) if len(token) >= min_len and not token.isdigit()]
