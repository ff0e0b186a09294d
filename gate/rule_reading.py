"""Reading rules/*.toml once loaded (gate/rules.py loads and merges them): a table by its path, a list of regexes
as LazyPatterns, the phrases the messages name memory kinds with.

Hot path, standard library only; the gates' feature modules read their rules through these, so none borrows
another's helpers.
"""

from __future__ import annotations

from gate.literals import IGNORECASE, MULTILINE

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from gate.literals import LazyPattern

    Rules = Mapping[str, Any]


def rule_section(rules: Rules, *path: str) -> Mapping[str, Any]:
    """The table at `path` in the rules (rules["a"]["b"] for "a", "b"), or an empty one when any step is missing
    or is not a table: a hand-edited rules file must not break a gate."""
    node: Any = rules
    for key in path:
        node = node.get(key, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}


_lazy: dict[tuple[tuple[str, ...], int], list[LazyPattern]] = {}


def rule_patterns(rules: Rules, *path: str, key: str = "patterns", text: bool = True) -> list[LazyPattern]:
    """The regexes listed under `key` in the table at `path`, as LazyPatterns (compiled on first use), kept per
    list: a Stop reads the same lists every turn."""
    raw = rule_section(rules, *path).get(key, [])
    items = tuple(str(p) for p in raw) if isinstance(raw, list) else ()
    # Sentences are prose: case does not matter. Tool output is not ("0 failed" vs "FAILED").
    flags = IGNORECASE if text else MULTILINE
    found = _lazy.get((items, flags))
    if found is None:
        from gate.literals import lazy_patterns  # (loaded already by whoever reads patterns: the Stop gate)

        found = _lazy[(items, flags)] = lazy_patterns(
            items, flags, getattr(rules, "literals", {}), getattr(rules, "prefilters", None)
        )
    return found


def rule_number(rules: Rules, section: str, key: str, default: float) -> float:
    """A number of the table `section` of the rules, or its default when it is missing or no number."""
    value = rule_section(rules, section).get(key, default)
    return float(value) if isinstance(value, int | float) else default


def number(section: Mapping[str, Any], key: str, default: float) -> float:
    """A numeric rule, or its default when the value is missing or not a number."""
    value = section.get(key, default)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


# ---------------------------------------------------------------------------------------------------------
# phrases of rules/writeback.toml [phrases]


def kind_phrase(kinds: Sequence[str], rules: Rules) -> str:
    """ "a decision and a fix": how the MEMORY CHECK names what the turn holds."""
    names = rule_section(rules, "phrases")
    return _series([str(names.get(kind, f"a {kind}")) for kind in kinds])


def _series(words: Sequence[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def action_phrase(kinds: Sequence[str], rules: Rules) -> str:
    """ "made a decision and a fix, and hit a gotcha": what the turn did, as the MEMORY CHECK's verb phrase
    ("this turn {what} and stored nothing"). Kinds that share a verb share it ([phrases.verbs])."""
    names = rule_section(rules, "phrases")
    verbs = rule_section(rules, "phrases", "verbs")
    groups: dict[str, list[str]] = {}
    for kind in kinds:
        groups.setdefault(str(verbs.get(kind, "made")), []).append(str(names.get(kind, f"a {kind}")))
    parts = [f"{verb} {_series(nouns)}" for verb, nouns in groups.items()]
    if len(parts) <= 1:
        return "".join(parts)
    last = ", and " if any(" and " in part for part in parts) else (" and " if len(parts) == 2 else ", and ")
    return ", ".join(parts[:-1]) + last + parts[-1]
