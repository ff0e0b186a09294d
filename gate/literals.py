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
MAX_GROUPS = 4  # checks per pattern: the strongest few requirements say almost all there is to say


def required_literals(pattern: str) -> list[Any] | None:
    """[groups, ignore_case]: every match of `pattern` contains, for each group, one of its strings (compared
    lowercased when ignore_case, i.e. the pattern sets (?i) itself); None when nothing can be worked out."""
    from re import _constants as c  # the parser ships with re; imported here, never on the hot path
    from re import _parser

    try:
        parsed = _parser.parse(pattern, 0)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    ignore_case = bool(parsed.state.flags & c.SRE_FLAG_IGNORECASE)
    groups = _requirements(list(parsed), c)
    if ignore_case:
        groups = [{s.lower() for s in group} for group in groups if all(s.isascii() for s in group)]
    if not groups:
        return None
    groups.sort(key=_strength, reverse=True)
    return [[sorted(group) for group in groups[:MAX_GROUPS]], ignore_case]


def _strength(group: set[str]) -> tuple[int, int]:
    """A rarer requirement first: longer strings, then fewer of them."""
    return min(len(s) for s in group), -len(group)


def _requirements(items: list[tuple[Any, Any]], c: Any) -> list[set[str]]:
    """Sets of strings such that every match of this sequence contains one string of each set (a conjunction of
    necessary conditions; only sets whose strings all have MIN_LITERAL characters or more)."""
    found: list[set[str]] = []
    run: list[str] = []

    def close_run() -> None:
        if len(run) >= MIN_LITERAL:
            found.append({"".join(run)})
        run.clear()

    for op, av in items:
        if op is c.LITERAL:
            run.append(chr(av))
            continue
        if op is c.AT:
            continue  # zero-width (\b, ^, $): the characters around it are still adjacent in the text
        close_run()
        if op is c.SUBPATTERN:
            _group, add_flags, del_flags, body = av
            if not add_flags and not del_flags:
                found += _requirements(list(body), c)
        elif op is c.BRANCH:
            # One string of the strongest requirement of each alternative: some alternative matched.
            strongest = [max(r, key=_strength) if r else None for r in (_requirements(list(b), c) for b in av[1])]
            if strongest and all(strongest):
                found.append(set().union(*strongest))  # type: ignore[arg-type]
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            low, _high, body = av
            if low >= 1:
                found += _requirements(list(body), c)
    close_run()
    return found


_REGEX_SYNTAX = frozenset("\\()[]{}|?*+.^$")


def literal_table(rules: Any) -> dict[str, list[Any] | None]:
    """required_literals() of every regex held in a list anywhere in a rules table (patterns live in lists).
    Plain words (stopword lists, say) are left out: the table is read by every hook."""
    table: dict[str, list[Any] | None] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                if isinstance(value, str):
                    if value not in table and not _REGEX_SYNTAX.isdisjoint(value):
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
        self.literals: tuple[tuple[str, ...], ...] = ()  # one string of each group must be in the text
        self.ignore_case = False
        if _well_formed(literals):
            groups, own_ignore_case = literals  # type: ignore[misc]
            self.ignore_case = bool(own_ignore_case) or bool(flags & re.IGNORECASE)
            if not self.ignore_case:
                self.literals = tuple(tuple(group) for group in groups)
            else:  # case folding beyond ASCII has look-alikes: such groups are left to the regex
                self.literals = tuple(
                    tuple(s.lower() for s in group) for group in groups if all(s.isascii() for s in group)
                )

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
