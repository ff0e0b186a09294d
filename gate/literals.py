"""Literal prefilters for the rules' regexes: compile a pattern only for text that could match it.

A Stop hook checks a turn against some eighty regexes from rules/writeback.toml, and compiling them cost each
hook process more than everything else it does (~10 ms). Most of them can only match text that contains one
of a few plain strings ("decided", "root cause", "turns out"...). Those strings are worked out once, from the
parsed pattern, when the rules snapshot is built (gate/rules.py: only when a rules file changes); a hook then
checks them with `in` and compiles only the patterns whose strings are present. The check is a necessary
condition, never a sufficient one: a pattern that passes it is compiled and searched as before, so answers
are exactly what the regexes alone would give (tests/test_literals.py holds that on random text).

This module is what hooks load (LazyPattern); working the strings out is gate/literal_analysis.py's job.

A pattern that does have to be compiled is compiled once per machine: its compiled program (what `re` hands to
the regex engine, `_sre`) is kept in a small cache file keyed by the engine's version, and later hooks give it
to the engine directly, skipping the parse and the compile in Python (~0.15 ms a pattern, ~2 ms of a Stop hook).
The engine checks every program it is given; one it refuses, or any trouble with the cache, means a plain
re.compile, as before.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    import re
    from typing import Any

# re's flags as the engine reads them (re.IGNORECASE …, which are these ints): a hook that compiles nothing new
# imports no `re` (and no `enum` with it), ~2 ms of a hook process; re.compile takes these as they are.
IGNORECASE = 2
MULTILINE = 8
DOTALL = 16

# The only characters beyond ASCII that re.IGNORECASE matches to an ASCII letter (checked over all of Unicode
# in tests/test_literals.py). Mapped before lowercasing (U+0130 lowercases to two characters).
IGNORECASE_FOLD = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}


# Latin-1 letters whose case re.IGNORECASE folds exactly as lower() does (é/É, à/À, ç/Ç …): not ß, ÿ, µ.
_LATIN1_CASED = frozenset(chr(c) for c in range(0xC0, 0xFF) if chr(c) not in "×÷ßÿµ")


def folds_plainly(text: str) -> bool:
    """Is `text` compared case-insensitively by plain lower()? ASCII, characters without case (Chinese,
    digits, punctuation) and the Latin-1 letters are; other cased letters are left to the regex."""
    if text.isascii():  # the common case, answered in C (a Stop hook asks this of every rule's strings)
        return True
    return all(ch.isascii() or ch in _LATIN1_CASED or ch.lower() == ch == ch.upper() for ch in text)


class LazyPattern:
    """A regex compiled on its first search of a text that holds one of its required strings."""

    __slots__ = ("_broken", "_compiled", "flags", "ignore_case", "literals", "source")

    def __init__(self, source: str, flags: int, literals: Any, prepared: bool = False) -> None:
        """`literals`: the pattern's entry of the rules' literal table, or (`prepared`) what prefilter() made of
        it (the rules snapshot keeps those: a Stop builds some 190 patterns, and working each out cost ~4 µs)."""
        self.source = source
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None
        self._broken = False
        entry = literals if prepared else prefilter(literals)
        if entry is None:
            self.literals: tuple[tuple[str, ...], ...] = ()  # one string of each group must be in the text
            self.ignore_case = False
        else:
            own_ignore_case, exact, folded = entry
            self.ignore_case = own_ignore_case or bool(flags & IGNORECASE)
            self.literals = folded if self.ignore_case else exact

    def compiled(self) -> re.Pattern[str] | None:
        """The compiled regex; None for one that does not compile (a user's broken override costs that pattern,
        never the gate)."""
        if self._compiled is None and not self._broken:
            try:
                self._compiled = compile_cached(self.source, self.flags)
            except Exception as error:
                import re  # (loaded already: only a compile raises it)

                if not isinstance(error, re.error):
                    raise
                self._broken = True
        return self._compiled

    def could_match(self, text: str) -> bool:
        if not self.literals:
            return True
        if self.ignore_case:
            text = _lowered(text)
        for group in self.literals:  # (plain loops: generators cost a Stop hook's ~400 checks ~0.3 ms)
            for literal in group:
                if literal in text:
                    break
            else:
                return False
        return True

    def search(self, text: str) -> re.Match[str] | None:
        if not self.could_match(text):
            return None
        compiled = self.compiled()
        return compiled.search(text) if compiled is not None else None


_last_lowered: list[str] = ["", ""]  # the last text lowered, and its lowered form


def _lowered(text: str) -> str:
    """The text as the prefilters compare it under IGNORECASE; the last one is kept, as the patterns of a list are
    checked against one text after the other."""
    if text is _last_lowered[0]:
        return _last_lowered[1]
    lowered = text.lower() if text.isascii() else text.translate(IGNORECASE_FOLD).lower()
    _last_lowered[0], _last_lowered[1] = text, lowered
    return lowered


def prefilter(literals: Any) -> tuple[bool, tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]] | None:
    """What LazyPattern makes of a pattern's entry in the literal table: (its own ignore-case, the groups as they
    are, the groups compared lowercased — those with cased letters beyond ASCII left out, their case folding is
    not ours), or None for no prefilter."""
    if not _well_formed(literals):
        return None
    groups, own_ignore_case = literals
    exact = tuple(tuple(group) for group in groups)
    folded = tuple(tuple(s.lower() for s in group) for group in groups if all(folds_plainly(s) for s in group))
    return bool(own_ignore_case), exact, folded


def _well_formed(literals: Any) -> bool:
    """[[[str, ...], ...], bool] — anything else (a snapshot from another version, a hand edit) means no prefilter."""
    return (
        isinstance(literals, list)
        and len(literals) == 2
        and isinstance(literals[0], list)
        and all(isinstance(g, list) and g and all(isinstance(s, str) and s for s in g) for g in literals[0])
    )


def lazy_patterns(
    sources: list[str] | tuple[str, ...], flags: int, table: dict[str, Any], prepared: dict[str, Any] | None = None
) -> list[LazyPattern]:
    """LazyPatterns for a list of rule patterns, with the required strings the rules snapshot worked out (`table`),
    or what prefilter() made of them (`prepared`, when the snapshot holds it)."""
    if prepared is not None:
        return [LazyPattern(source, flags, prepared.get(source), prepared=True) for source in sources]
    return [LazyPattern(source, flags, table.get(source)) for source in sources]


# --- compiled programs, kept across processes ---------------------------------------------------------------
_programs: dict[tuple[Any, int], tuple[Any, ...]] | None = None
MAX_PROGRAMS = 2000  # a cache past this (rules edited many times over) starts again


def _programs_file() -> str:
    import _sre

    from gate.paths import user_dirs

    return os.path.join(user_dirs().cache, "rules", f"sre-{_sre.MAGIC}-{sys.hexversion:x}.marshal")


def _known_programs() -> dict[tuple[Any, int], tuple[Any, ...]]:
    global _programs
    if _programs is None:
        import marshal

        try:
            with open(_programs_file(), "rb") as handle:
                data = marshal.loads(handle.read())  # (marshal.load reads a file piece by piece: ~5x slower)
            _programs = data if isinstance(data, dict) else {}
        except (OSError, ValueError, EOFError, TypeError):
            _programs = {}
    return _programs


def compile_cached(source: Any, flags: int = 0) -> re.Pattern[Any]:
    """re.compile(source, flags) for a str or bytes pattern, from the program an earlier process compiled when
    there is one."""
    import _sre

    flags = int(flags)  # a RegexFlag would not marshal
    programs = _known_programs()
    entry = programs.get((source, flags))
    if entry is not None:
        try:
            out_flags, code, groups, groupindex, indexgroup = entry
            # the program's words as array("I") wrote them; memoryview reads them without importing array
            words = memoryview(code).cast("I").tolist()
            return _sre.compile(source, out_flags, words, groups, groupindex, indexgroup)
        except Exception:  # refused by the engine, or not the shape written below: compile it afresh
            pass
    import re  # only for a program no earlier process kept

    try:
        from array import array
        from re import _compiler, _parser

        parsed = _parser.parse(source, flags)
        code = _compiler._code(parsed, flags)
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, number in groupindex.items():
            indexgroup[number] = name
        entry = (int(flags | parsed.state.flags), array("I", code).tobytes(), parsed.state.groups - 1, groupindex,
                 tuple(indexgroup))
        pattern = _sre.compile(source, entry[0], [int(op) for op in code], entry[2], entry[3], entry[4])
    except re.error:
        raise
    except Exception:  # re's internals are not what this Python's were: the plain way
        return re.compile(source, flags)
    if len(programs) >= MAX_PROGRAMS:
        programs.clear()
    programs[(source, flags)] = entry
    global _unsaved
    if _unsaved is None:
        try:
            _unsaved = _programs_file()  # where they go: decided now, whatever the environment is at the end
        except Exception:
            _unsaved = None  # nowhere to keep them: compiled again next time
    return pattern


_unsaved: str | None = None  # the cache file, while this process compiled programs it does not hold yet


def save_new_programs() -> None:
    """Write the cache file once, at the end of a hook process that compiled something new (gate.hook.entry).
    The CLI reads the cache and does not write it: a command's few compiles cost it nothing that matters, and a
    command's writes stay exactly those of its job."""
    global _unsaved
    if _unsaved is not None and _programs is not None:
        path, _unsaved = _unsaved, None
        _save_programs(_programs, path)


def _save_programs(programs: dict[tuple[Any, int], tuple[Any, ...]], path: str | None = None) -> None:
    import marshal

    from gate.paths import ensure_private_dir, replace_file

    try:
        path = path or _programs_file()
        ensure_private_dir(os.path.dirname(path))
        replace_file(path, marshal.dumps(programs))
    except (OSError, ValueError):
        pass  # no cache, no harm: the next process compiles again


class CompiledOnUse:
    """A module-level regex compiled at its first use (from a kept program), not when its module is imported:
    `_WORD = CompiledOnUse(r"...")`, then `_WORD.findall(text)` as with a compiled pattern."""

    __slots__ = ("_pattern", "_source")

    def __init__(self, source: Any, flags: int = 0) -> None:
        self._source = (source, flags)
        self._pattern: re.Pattern[Any] | None = None

    def __getattr__(self, name: str) -> Any:  # search, split, sub, findall …: the pattern's own
        pattern = self._pattern
        if pattern is None:
            pattern = self._pattern = compile_cached(*self._source)
        return getattr(pattern, name)
