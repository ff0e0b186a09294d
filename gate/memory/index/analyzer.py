"""The index's analyzer: tantivy's own tokenizer, filters and Snowball English stemmer, configured from
rules/text.toml. Documents are indexed with it; queries are analysed by gate.textproc, which does the same
steps without tantivy (tests/test_textproc.py holds the two to the same output)."""

from __future__ import annotations

from gate.memo import cache  # functools.cache without functools (gate/memo.py)
from gate.memory.index.engine import tantivy
from gate.textproc import text_rules


@cache
def analyzer() -> tantivy.TextAnalyzer:
    """Tokenize, lowercase, drop long tokens and stopwords, stem (the writer registers it under the schema's
    ANALYZER_NAME)."""
    max_len, _, words = text_rules()
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.remove_long(max_len + 1))
        .filter(tantivy.Filter.custom_stopword(sorted(words)))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )
