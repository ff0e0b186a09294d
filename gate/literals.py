"""Literal prefilters for the rules' regexes: compile a pattern only for text that could match it.

A Stop hook checks a turn against some eighty regexes from rules/writeback.toml, and compiling them cost each
hook process more than everything else it does (~10 ms). Most of them can only match text that contains one
of a few plain strings ("decided", "root cause", "turns out"...). Those strings are worked out once, from the
parsed pattern, when the rules snapshot is built (gate/rules.py: only when a rules file changes); a hook then
checks them with `in` and compiles only the patterns whose strings are present. The check is a necessary
condition, never a sufficient one: a pattern that passes it is compiled and searched as before, so answers
are exactly what the regexes alone would give (tests/test_literals.py holds that on random text).

The hot path uses LazyPattern only; required_literals() (the analysis) runs on the cold path.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

MIN_LITERAL = 3  # shorter strings are in almost any text: not worth a check


# --- cold path: what a pattern requires ----------------------------------------------------------------------------
def required_literals(pattern: str) -> list[Any] | None:
    """[strings, ignore_case]: every match of `pattern` contains one of `strings` (compared lowercased when
    ignore_case, i.e. the pattern sets (?i) itself); None when no such set can be worked out."""
    from re import _constants as c  # the parser ships with re; imported here, never on the hot path
    from re import _parser

    try:
        parsed = _parser.parse(pattern, 0)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    ignore_case = bool(parsed.state.flags & c.SRE_FLAG_IGNORECASE)
    found = _required(list(parsed), c)
    if not found or min(len(s) for s in found) < MIN_LITERAL:
        return None
    if ignore_case:
        if not all(s.isascii() for s in found):
            return None  # case folding beyond ASCII has look-alikes; leave such patterns to the regex
        found = {s.lower() for s in found}
    return [sorted(found), ignore_case]


def _required(items: list[tuple[Any, Any]], c: Any) -> set[str] | None:
    """A set of strings one of which every match of this sequence contains, the strongest found (None: none)."""
    candidates: list[set[str]] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            candidates.append({"".join(run)})
            run.clear()

    for op, av in items:
        if op is c.LITERAL:
            run.append(chr(av))
            continue
        if op is c.AT:
            continue  # zero-width (\b, ^, $): the characters around it are still adjacent in the text
        close_run()
        sub: set[str] | None = None
        if op is c.SUBPATTERN:
            _group, add_flags, del_flags, body = av
            if not add_flags and not del_flags:
                sub = _required(list(body), c)
        elif op is c.BRANCH:
            alternatives = [_required(list(branch), c) for branch in av[1]]
            if alternatives and all(alternatives):
                sub = set().union(*alternatives)  # type: ignore[arg-type]
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            low, _high, body = av
            if low >= 1:
                sub = _required(list(body), c)
        if sub:
            candidates.append(sub)
    close_run()
    if not candidates:
        return None
    # The strongest requirement: the longest shortest string, then the fewest strings.
    return max(candidates, key=lambda strings: (min(len(s) for s in strings), -len(strings)))


def literal_table(rules: Any) -> dict[str, list[Any] | None]:
    """required_literals() of every string held in a list anywhere in a rules table (patterns live in lists;
    the few plain words there cost nothing to analyse)."""
    table: dict[str, list[Any] | None] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                if isinstance(value, str):
                    if value not in table:
                        table[value] = required_literals(value)
                else:
                    walk(value)

    walk(rules)
    return table


# --- hot path -------------------------------------------------------------------------------------------------------
class LazyPattern:
    """A regex compiled on its first search of a text that holds one of its required strings."""

    __slots__ = ("_compiled", "flags", "ignore_case", "literals", "source")

    def __init__(self, source: str, flags: int, literals: list[Any] | None) -> None:
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None
        if literals is None:
            self.literals: tuple[str, ...] = ()
            self.ignore_case = False
        else:
            strings, own_ignore_case = literals
            self.ignore_case = bool(own_ignore_case) or bool(flags & re.IGNORECASE)
            if not self.ignore_case:
                self.literals = tuple(strings)
            elif all(s.isascii() for s in strings):
                self.literals = tuple(s.lower() for s in strings)
            else:
                self.literals = ()  # case folding beyond ASCII has look-alikes: no prefilter

    def compiled(self) -> re.Pattern[str] | None:
        """The compiled regex; None for one that does not compile (a user's broken override costs that pattern,
        never the gate)."""
        if self._compiled is None:
            try:
                self._compiled = re.compile(self.source, self.flags)
            except re.error:
                self._compiled = False  # type: ignore[assignment]
        return self._compiled or None

    def could_match(self, text: str) -> bool:
        if not self.literals:
            return True
        if self.ignore_case:
            if not text.isascii():
                return True  # case folding beyond ASCII: let the regex decide
            text = text.lower()
        return any(literal in text for literal in self.literals)

    def search(self, text: str) -> re.Match[str] | None:
        if not self.could_match(text):
            return None
        compiled = self.compiled()
        return compiled.search(text) if compiled is not None else None


def lazy_patterns(sources: list[str] | tuple[str, ...], flags: int, table: dict[str, Any]) -> list[LazyPattern]:
    """LazyPatterns for a list of rule patterns, with the required strings the rules snapshot worked out."""
    return [LazyPattern(source, flags, table.get(source)) for source in sources]
