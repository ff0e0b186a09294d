"""A debugging loop blocks at most once (hot path; imported only by a Stop that blocks, defers a fix or stores).

After a block for a fix, or a fix stored (`gate remember … --kind fix`), the session's ledger keeps what that
fix was about (`writeback_fix_guard`): the files the turn edited, the commands that failed in it, and the
names its fix quotes used (identifiers: a word with `_`, `.`, `/`, `::`, a digit or an inner capital). A later
turn whose fix evidence is about the same thing — it edits one of those files, a command of those fails again,
or it names `min_terms` of those names — is the same loop going on: its fix features are left out of the score
([fix_guard] features in rules/writeback.toml). Evidence of another kind in it still blocks on its own; what
the fix alone would have blocked is deferred to a reminder at the next prompt (ALLOW_DEFERRED_SAME_FIX).

The guard lasts until the topic changes: a prompt the recall gate finds on a new topic ends it
(gate/gates/events/user_prompt_submit.py), a fix about something else blocks and takes it over, and a guard no
fix about its topic has touched for `idle_turns` turn ends lapses.
"""

from __future__ import annotations

from gate.gates.writeback.evidence import failed_commands, find_evidence
from gate.literals import CompiledOnUse
from gate.rule_reading import rule_patterns, rule_section

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from gate.gates.writeback.evidence import Evidence
    from gate.session.ledger import Ledger
    from gate.session.turn import Turn

    Rules = Mapping[str, Any]

DEFAULT_FEATURES = ("fix", "tool_fix", "tool_fix_unconfirmed", "confirmed", "unconfirmed_fix", "asked_fix",
                    "recovered")
# A name in prose: a word with an underscore, a dot or a slash inside, "::", a digit, or an inner capital.
_WORD = CompiledOnUse(r"[A-Za-z0-9_][\w.:/-]*[\w]")
_KEEP = 20  # files, commands and names kept per guard, newest last


def _section(rules: Rules) -> Mapping[str, Any]:
    return rule_section(rules, "fix_guard")


def _int(rules: Rules, key: str, default: int) -> int:
    value = _section(rules).get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def enabled(rules: Rules) -> bool:
    return _section(rules).get("enabled", True) is not False


def fix_features(rules: Rules) -> tuple[str, ...]:
    """The features that are the fix's, left out of the score when the guard holds."""
    names = _section(rules).get("features")
    return tuple(n for n in names if isinstance(n, str)) if isinstance(names, list) else DEFAULT_FEATURES


def names(texts: Iterable[str]) -> list[str]:
    """The identifiers of some prose, lower-cased, first seen first ("cache_key", "export.py", "getLaneHazards")."""
    seen: dict[str, None] = {}
    for text in texts:
        for word in _WORD.findall(text):
            word = word.strip(".:/-")
            inner = word[1:]
            camel = any(c.isupper() for c in inner) and any(c.islower() for c in inner)
            named = any(c in word for c in "_./:") or any(c.isdigit() for c in word) or camel
            number = word.replace(".", "").replace(",", "").isdigit()  # a number is no name ("3.14", "2026")
            if len(word) >= 4 and named and not number:
                seen.setdefault(word.lower(), None)
    return list(seen)


def topic(turn: Turn, evidence: Evidence | None, rules: Rules, texts: Iterable[str] = ()) -> dict[str, list[str]]:
    """What a turn's fix is about: files edited, commands that failed, names in its fix quotes (and `texts`)."""
    files = list(evidence.files) if evidence is not None else []
    quoted = [q for k, q in zip(evidence.kinds, evidence.quotes, strict=False) if k == "fix"] if evidence else []
    return {
        "files": list(dict.fromkeys(f for f in files if f))[-_KEEP:],
        "commands": failed_commands(turn, rules)[-_KEEP:],
        "terms": names([*quoted, *texts])[-_KEEP:],
    }


def _live(ledger: Ledger, rules: Rules) -> dict[str, Any] | None:
    guard = ledger.writeback_fix_guard
    if not isinstance(guard, dict):
        return None
    last = guard.get("last", 0)
    if not isinstance(last, int) or ledger.writeback_turns - last > _int(rules, "idle_turns", 5):
        return None  # nothing about it for a while: the loop is over
    return guard


def same_fix(ledger: Ledger, found: Mapping[str, list[str]], rules: Rules) -> dict[str, Any] | None:
    """What the turn's fix shares with the session's guard ({"of": its turn, "by": …, "shared": […]}), or None."""
    guard = _live(ledger, rules)
    if guard is None:
        return None
    for key, least in (("files", 1), ("commands", 1), ("terms", max(1, _int(rules, "min_terms", 2)))):
        held = guard.get(key)
        shared = [x for x in found.get(key, []) if isinstance(held, list) and x in held]
        if len(shared) >= least:
            return {"of": guard.get("turn"), "by": key, "shared": shared[:3]}
    return None


def keep(ledger: Ledger, found: Mapping[str, list[str]], extend: bool = False) -> None:
    """The turn's fix becomes the guard (`extend`: the same loop goes on; what it touched joins the guard)."""
    guard = ledger.writeback_fix_guard if extend and isinstance(ledger.writeback_fix_guard, dict) else None
    if guard is None:
        kept = {key: list(found.get(key, []))[-_KEEP:] for key in ("files", "commands", "terms")}
        ledger.writeback_fix_guard = {"turn": ledger.writeback_turns, "last": ledger.writeback_turns, **kept}
        return
    guard["last"] = ledger.writeback_turns
    for key in ("files", "commands", "terms"):
        held = [x for x in guard.get(key, []) if isinstance(x, str)]
        guard[key] = list(dict.fromkeys([*held, *found.get(key, [])]))[-_KEEP:]


def without_fix(features: Mapping[str, float], rules: Rules) -> dict[str, float]:
    """The turn's features with the fix's left out: what it holds besides the loop's fix."""
    drop = set(fix_features(rules))
    return {name: value for name, value in features.items() if name not in drop}


def holds_fix(contributions: Mapping[str, float], rules: Rules) -> bool:
    """Did a fix feature count towards the score?"""
    return any(contributions.get(name, 0) > 0 for name in fix_features(rules))


def deferred(
    turn: Turn, evidence: Evidence, rules: Rules, ledger: Ledger, extra: dict[str, Any],
) -> dict[str, list[str]] | None:
    """A fix deferred to a reminder: what it is about (kept with the reminder: stored at the next prompt, it
    guards its loop). A fix about the guarded one is the loop going on: the guard holds on."""
    if not enabled(rules):
        return None
    found = topic(turn, evidence, rules)
    same = same_fix(ledger, found, rules)
    if same is not None:
        extra["fix_guard"] = same
        keep(ledger, found, extend=True)
    return found


def stored(
    turn: Turn, rules: Rules, ledger: Ledger, command: str, reminded: Mapping[str, Any] | None, extra: dict[str, Any],
) -> None:
    """A store in the turn: a fix stored (`--kind fix`, or the fix the turn's reminder named) guards its loop."""
    if not enabled(rules):
        return
    stores_a_fix = any(p.search(command) for p in rule_patterns(rules, "fix_guard", key="stored_fix"))
    if not isinstance(reminded, dict) and not stores_a_fix:
        return
    found = topic(turn, find_evidence(turn, rules), rules, texts=[command])
    for key, values in (reminded or {}).items():
        if isinstance(values, list):
            found[key] = list(dict.fromkeys([*values, *found.get(key, [])]))[-_KEEP:]
    keep(ledger, found)
    extra["fix_guarded"] = ledger.writeback_turns
