"""Working out the plain strings a regex requires (cold path: run when a rules snapshot is built).

gate/literals.py explains the why; this is the analysis, on re's own parser (re._parser, shipped with re):
for each pattern, sets of strings such that every match contains one string of each set.
"""

from __future__ import annotations

from gate.literals import folds_plainly

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MIN_LITERAL = 3  # shorter strings are in almost any text: not worth a check
MIN_WIDE_LITERAL = 1  # ... except characters beyond ASCII: one Chinese character is rarer than three letters
MAX_GROUPS = 4  # checks per pattern: the strongest few requirements say almost all there is to say


def required_literals(pattern: str) -> list[Any] | None:
    """[groups, ignore_case]: every match of `pattern` contains, for each group, one of its strings (compared
    lowercased when ignore_case, i.e. the pattern sets (?i) itself); None when nothing can be worked out."""
    try:
        from re import _constants as c
        from re import _parser

        parsed = _parser.parse(pattern, 0)
        ignore_case = bool(parsed.state.flags & c.SRE_FLAG_IGNORECASE)
        groups = _requirements(list(parsed), c)
    except Exception:  # a bad pattern, or re's private parser changed shape: no prefilter, never a failed load
        return None
    if ignore_case:
        groups = [{s.lower() for s in group} for group in groups if all(folds_plainly(s) for s in group)]
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
        if len(run) >= MIN_LITERAL or (len(run) >= MIN_WIDE_LITERAL and not any(ch.isascii() for ch in run)):
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
