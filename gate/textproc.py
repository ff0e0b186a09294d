"""Text to search terms (hot path): code identifiers split, stopwords dropped, English-stemmed by tantivy.

One analyzer serves the index, the queries and the recall gate's topic record, so a term means the same
thing everywhere. Stemming is tantivy's (Snowball English), not ours.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

import tantivy

from gate.rules import load_rules

ANALYZER_NAME = "gate_en"

# camelCase / PascalCase / digit boundaries: "parseHTTPConfig2" -> "parse HTTP Config 2"
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])")
_IDENT = re.compile(r"\b[A-Za-z][A-Za-z0-9]*[a-z][A-Z][A-Za-z0-9]*\b")


def expand_identifiers(text: str) -> str:
    """Append the parts of camelCase identifiers so both the whole and its parts are searchable."""
    parts = [_CAMEL.sub(" ", ident) for ident in _IDENT.findall(text)]
    return f"{text} {' '.join(parts)}" if parts else text


@cache
def _text_rules() -> tuple[int, int, frozenset[str]]:
    rules = load_rules("text")
    tokens = rules.get("tokens", {})
    words = frozenset(w.lower() for w in rules.get("stopwords", {}).get("words", []))
    return int(tokens.get("max_token_length", 40)), int(tokens.get("min_token_length", 2)), words


def stopwords() -> frozenset[str]:
    return _text_rules()[2]


@cache
def analyzer() -> tantivy.TextAnalyzer:
    """Tokenize, lowercase, drop long tokens and stopwords, stem. Registered on the index under ANALYZER_NAME."""
    max_len, _, words = _text_rules()
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.remove_long(max_len + 1))
        .filter(tantivy.Filter.custom_stopword(sorted(words)))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def terms(text: str) -> list[str]:
    """Content terms of a text, in order, with repeats: stemmed, no stopwords, no bare numbers."""
    if not text:
        return []
    _, min_len, _ = _text_rules()
    return [
        token
        for token in analyzer().analyze(expand_identifiers(text))
        if len(token) >= min_len and not token.isdigit()
    ]


def term_counts(text: str) -> Counter[str]:
    return Counter(terms(text))
