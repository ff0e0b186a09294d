"""Literal prefilters for the rules' regexes: compile a pattern only for text that could match it.

A Stop hook checks a turn against some eighty regexes from rules/writeback.toml, and compiling them cost each
hook process more than everything else it does (~10 ms). Most of them can only match text that contains one
of a few plain strings ("decided", "root cause", "turns out"...). Those strings are worked out once, from the
parsed pattern, when the rules snapshot is built (gate/rules.py: only when a rules file changes); a hook then
checks them with `in` and compiles only the patterns whose strings are present. The check is a necessary
condition, never a sufficient one: a pattern that passes it is compiled and searched as before, so answers
are exactly what the regexes alone would give (tests/test_literals.py holds that on random text).

This module is what hooks load (LazyPattern); working the strings out is gate/literal_analysis.py's job.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

# The only characters beyond ASCII that re.IGNORECASE matches to an ASCII letter (checked over all of Unicode
# in tests/test_literals.py). Mapped before lowercasing (U+0130 lowercases to two characters).
IGNORECASE_FOLD = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}


# Latin-1 letters whose case re.IGNORECASE folds exactly as lower() does (é/É, à/À, ç/Ç …): not ß, ÿ, µ.
_LATIN1_CASED = frozenset(chr(c) for c in range(0xC0, 0xFF) if chr(c) not in "×÷ßÿµ")


def folds_plainly(text: str) -> bool:
    """Is `text` compared case-insensitively by plain lower()? ASCII, characters without case (Chinese,
    digits, punctuation) and the Latin-1 letters are; other cased letters are left to the regex."""
    return all(ch.isascii() or ch in _LATIN1_CASED or ch.lower() == ch == ch.upper() for ch in text)


class LazyPattern:
    """A regex compiled on its first search of a text that holds one of its required strings."""

    __slots__ = ("_broken", "_compiled", "flags", "ignore_case", "literals", "source")

    def __init__(self, source: str, flags: int, literals: list[Any] | None) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None
        self._broken = False
        self.literals: tuple[tuple[str, ...], ...] = ()  # one string of each group must be in the text
        self.ignore_case = False
        if _well_formed(literals):
            groups, own_ignore_case = literals  # type: ignore[misc]
            self.ignore_case = bool(own_ignore_case) or bool(flags & re.IGNORECASE)
            if not self.ignore_case:
                self.literals = tuple(tuple(group) for group in groups)
            else:  # groups with cased letters beyond ASCII are left to the regex (their case folding is not ours)
                self.literals = tuple(
                    tuple(s.lower() for s in group) for group in groups if all(folds_plainly(s) for s in group)
                )

    def compiled(self) -> re.Pattern[str] | None:
        """The compiled regex; None for one that does not compile (a user's broken override costs that pattern,
        never the gate)."""
        if self._compiled is None and not self._broken:
            try:
                self._compiled = re.compile(self.source, self.flags)
            except re.error:
                self._broken = True
        return self._compiled

    def could_match(self, text: str) -> bool:
        if not self.literals:
            return True
        if self.ignore_case:
            text = text.lower() if text.isascii() else text.translate(IGNORECASE_FOLD).lower()
        return all(any(literal in text for literal in group) for group in self.literals)

    def search(self, text: str) -> re.Match[str] | None:
        if not self.could_match(text):
            return None
        compiled = self.compiled()
        return compiled.search(text) if compiled is not None else None


def _well_formed(literals: Any) -> bool:
    """[[[str, ...], ...], bool] — anything else (a snapshot from another version, a hand edit) means no prefilter."""
    return (
        isinstance(literals, list)
        and len(literals) == 2
        and isinstance(literals[0], list)
        and all(isinstance(g, list) and g and all(isinstance(s, str) and s for s in g) for g in literals[0])
    )


def lazy_patterns(sources: list[str] | tuple[str, ...], flags: int, table: dict[str, Any]) -> list[LazyPattern]:
    """LazyPatterns for a list of rule patterns, with the required strings the rules snapshot worked out."""
    return [LazyPattern(source, flags, table.get(source)) for source in sources]
