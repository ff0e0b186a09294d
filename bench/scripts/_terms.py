"""Query terms for the peer hooks: what a small memory tool does with a prompt (lowercase, split, drop stopwords).

Deliberately simple and stdlib-only; the peers are measured for cost, not for ranking quality.
"""

from __future__ import annotations

import re

_STOP_TEXT = """
    a about after again all also an and any are as at be because been before being but by can could did do
    does doing done for from get got had has have how i if in into is it its just let me more most my no not
    now of on once only or our out over please so some such than that the their them then there these they
    this those to too up us very was we were what when where which while who why will with would you your
"""
_STOP = frozenset(_STOP_TEXT.split())
_WORD = re.compile(r"[a-z0-9][a-z0-9_]*")


def terms(prompt: str, limit: int = 8) -> list[str]:
    """Distinct content words of a prompt, in order, at most `limit`."""
    seen: list[str] = []
    for word in _WORD.findall(prompt.lower()):
        if len(word) > 2 and word not in _STOP and word not in seen:
            seen.append(word)
    return seen[:limit]
