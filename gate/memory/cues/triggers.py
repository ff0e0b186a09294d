"""Trigger specs: when a memory comes back by itself (hot path: standard library only, no dataclasses).

A memory's `triggers` is a list of specs; each spec is clauses joined by commas. All clauses of one spec
must hold (AND); any one spec of the list may fire (OR). Cue clauses say *when*:

    path:GLOB        a Read/Edit/Write/MultiEdit/NotebookEdit/Grep/Glob touches a matching file
    command:REGEX    a Bash command about to run matches (Python `re.search`; use (?i) for any case)
    keyword:WORDS    a user prompt contains every one of the words (stemmed: "migrations" finds "migration")
    event:NAME       session-start | post-compaction | prompt | pre-edit | pre-run

and modifiers bound them in time:

    not-before:DATE  silent until then          DATE = YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS] (UTC unless an
    expires:DATE     silent from then on               offset is given); `gate remember` also takes +30d, +2w
    cooldown:DUR     at least DUR between two deliveries in a session (30m, 2h, 1d, 1h30m)

A comma starts a new clause only when a clause name and a colon follow it, so a regex may hold commas.
A spec without a cue clause (only modifiers, e.g. `expires:2027-01-01`) keeps the kind's default delivery,
bounded by its modifiers. Globs are relative to the project root: `*` and `?` stay inside one path
segment, `**` spans any number of segments (also none: `src/db/**` matches src/db itself), `[abc]` is a
class, and a glob without wildcards names a file or a whole directory (gate/memory/cues/globs.py).
"""

from __future__ import annotations

import time

from gate.errors import ValidationError
from gate.literals import IGNORECASE, CompiledOnUse, compile_cached
from gate.memo import cache  # functools.cache without functools (gate/memo.py)

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    import re
    from typing import Any

EVENTS = ("session-start", "post-compaction", "prompt", "pre-edit", "pre-run")
CUES = ("path", "command", "keyword", "event")
MODIFIERS = ("not-before", "expires", "cooldown")
CLAUSES = CUES + MODIFIERS
MAX_SPEC_CHARS = 500
MAX_TRIGGERS = 20


@cache
def _patterns() -> dict[str, re.Pattern[str]]:
    """Compiled on first use, from the programs an earlier process kept (gate/literals.py): a hook that never
    parses a spec never pays for them, and one that does imports no `re`."""
    names = "|".join(c.replace("-", "\\-") for c in CLAUSES)  # re.escape of these names
    return {
        "split": compile_cached(r",(?=\s*(?:" + names + r")\s*:)"),
        "duration": compile_cached(r"(\d+)\s*([smhdw])"),
        "duration_whole": compile_cached(r"(?:\d+\s*[smhdw]\s*)+"),
        "relative": compile_cached(r"\+\s*((?:\d+\s*[smhdw]\s*)+)"),
        "date": compile_cached(
            r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?\s*(Z|[+-]\d{2}:?\d{2})?", IGNORECASE
        ),
    }


_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
SYNTAX_HINT = (
    "write clauses joined by commas, e.g. path:src/db/**,expires:2027-01-01 — clauses: path:GLOB, "
    "command:REGEX, keyword:WORDS, event:" + "|".join(EVENTS) + ", not-before:DATE, expires:DATE, cooldown:30m"
)

# Which hook evaluates a trigger, from its cue clauses.
CHANNEL_TOOL = "tool"  # PreToolUse: path, command, pre-edit, pre-run
CHANNEL_PROMPT = "prompt"  # UserPromptSubmit: keyword, prompt
CHANNEL_START = "session-start"  # SessionStart startup|resume|clear
CHANNEL_COMPACT = "post-compaction"  # SessionStart compact


class Trigger:
    """One parsed spec. Times are epoch seconds (UTC); cooldown is seconds."""

    __slots__ = ("commands", "cooldown", "event", "expires", "keywords", "not_before", "paths", "spec")

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.paths: list[str] = []
        self.commands: list[str] = []
        self.keywords: list[str] = []
        self.event: str | None = None
        self.not_before: float | None = None
        self.expires: float | None = None
        self.cooldown: float | None = None

    @property
    def has_cue(self) -> bool:
        return bool(self.paths or self.commands or self.keywords or self.event)

    @property
    def channel(self) -> str | None:
        if self.paths or self.commands or self.event in ("pre-edit", "pre-run"):
            return CHANNEL_TOOL
        if self.keywords or self.event == "prompt":
            return CHANNEL_PROMPT
        return self.event  # session-start, post-compaction, or None (no cue: the kind's default)

    def window_state(self, now: float) -> str:
        """"open", "not_yet" or "expired" at `now`."""
        if self.expires is not None and now >= self.expires:
            return "expired"
        if self.not_before is not None and now < self.not_before:
            return "not_yet"
        return "open"

    def to_json(self) -> dict[str, object]:
        """The form the cue table stores: compact, and enough to evaluate without parsing again."""
        data: dict[str, object] = {"spec": self.spec}
        if self.paths:
            data["paths"] = self.paths
        if self.commands:
            data["commands"] = self.commands
            # a literal each regex needs: a tool call checks `in` first and compiles only the plausible ones
            data["needs"] = [required_literal(command) for command in self.commands]
        if self.keywords:
            data["keywords"] = self.keywords
        for name in ("event", "not_before", "expires", "cooldown"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        return data


def required_literal(pattern: str) -> list[object] | None:
    """[text, ignorecase] for the longest run of plain characters every match of `pattern` contains, or None.

    Only the top level of the regex is read (inside a group or an alternation nothing is certain), and only
    ASCII text under IGNORECASE (str.lower() would not fold like re does)."""
    try:
        from re import _constants as constants
        from re import _parser as parser

        parsed = parser.parse(pattern)
    except Exception:  # another Python's internals: no shortcut, the regex alone decides
        return None
    ignore = bool(parsed.state.flags & IGNORECASE)
    best, run = "", []
    for op, argument in parsed:
        if op is constants.LITERAL:
            run.append(chr(argument))
            continue
        best = max(best, "".join(run), key=len)
        run = []
    best = max(best, "".join(run), key=len)
    if len(best) < 2 or (ignore and not best.isascii()):
        return None
    return [best.lower() if ignore else best, ignore]


def window_state(trigger: dict[str, object], now: float) -> str:
    """window_state() for a trigger in its stored (to_json) form."""
    expires = trigger.get("expires")
    if isinstance(expires, int | float) and now >= expires:
        return "expired"
    not_before = trigger.get("not_before")
    if isinstance(not_before, int | float) and now < not_before:
        return "not_yet"
    return "open"


_WORDLIKE = r"[a-z][a-z_-]{0,19}"  # a clause name as people mistype one: never a secret
_WORDLIKE_RE = CompiledOnUse(_WORDLIKE)


def _shape(spec: str) -> str:
    """A spec named by its clause names only: an error message must never repeat a value (it may be a secret
    that the store is about to refuse)."""
    names = [part.partition(":")[0].strip().lower() for part in _patterns()["split"].split(spec)]
    known = [name if name in CLAUSES or _WORDLIKE_RE.fullmatch(name) else "?" for name in names]
    return "'" + ",".join(f"{name}:…" for name in known) + "'"


def _fail(spec: str, message: str, hint: str = SYNTAX_HINT) -> ValidationError:
    return ValidationError(f"trigger {_shape(spec)}: {message}", hint=hint)


def split_clauses(spec: str) -> list[tuple[str, str]]:
    clauses = []
    for part in _patterns()["split"].split(spec):
        name, sep, value = part.partition(":")
        name = name.strip().lower()
        if not sep or name not in CLAUSES:
            # A word-like name is quoted back (it is no secret); anything else is not repeated (see _shape).
            what = f"{name!r} is not a clause name" if sep and _WORDLIKE_RE.fullmatch(name) else (
                "a clause has no NAME:" if not sep else "a clause name is not one gate knows")
            raise _fail(spec, f"{what}; every clause is NAME:VALUE with NAME one of " + ", ".join(CLAUSES))
        clauses.append((name, value.strip()))
    return clauses


# --- time ---------------------------------------------------------------------------------------------------------
def parse_duration(text: str) -> float:
    """`30m`, `2h`, `1d`, `1h30m` -> seconds; ValueError otherwise."""
    compact = text.strip().lower()
    if not compact or not _patterns()["duration_whole"].fullmatch(compact):
        raise ValueError("not a duration like 30m, 2h, 1d or 1h30m")
    return float(sum(int(n) * _UNIT_SECONDS[u] for n, u in _patterns()["duration"].findall(compact)))


def parse_time(text: str) -> float:
    """An absolute DATE (see the module doc) -> epoch seconds; ValueError otherwise."""
    import calendar

    match = _patterns()["date"].fullmatch(text.strip())
    if not match:
        raise ValueError("not a date like 2027-01-01 or 2027-01-01T09:30")
    year, month, day, hour, minute, second, zone = match.groups()
    fields = (int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0))
    if not (1 <= fields[1] <= 12 and 1 <= fields[2] <= 31 and fields[3] < 24 and fields[4] < 60 and fields[5] < 62):
        raise ValueError("not a valid date")
    try:
        seconds = float(calendar.timegm((*fields, 0, 0, 0)))
        import datetime

        datetime.date(fields[0], fields[1], fields[2])  # rejects 2027-02-30
    except (ValueError, OverflowError) as error:
        raise ValueError("not a valid date") from error
    if zone and zone.upper() != "Z":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        seconds -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)
    return seconds


def format_time(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


# --- parsing --------------------------------------------------------------------------------------------------------
def parse(spec: str, *, now: float | None = None) -> Trigger:
    """Parse and check one spec; ValidationError with a hint on anything wrong.

    Relative dates (`expires:+30d`) are accepted only when `now` is given (at write time, see normalize)."""
    from gate.memory.cues import globs  # loaded once a glob is to be read

    if not isinstance(spec, str) or not spec.strip():
        raise _fail(str(spec), "empty")
    if len(spec) > MAX_SPEC_CHARS:
        raise _fail(spec, f"longer than {MAX_SPEC_CHARS} characters")
    if "\n" in spec or "\r" in spec:
        raise _fail(spec, "must be one line")
    trigger = Trigger(spec.strip())
    seen: set[str] = set()
    for name, value in split_clauses(spec):
        if not value:
            raise _fail(spec, f"{name}: needs a value")
        if name in ("event", *MODIFIERS) and name in seen:
            raise _fail(spec, f"{name}: appears twice; write one --on per alternative")
        seen.add(name)
        if name == "path":
            try:
                trigger.paths.append(globs.normalize_glob(value))
            except ValueError as error:
                raise _fail(spec, f"path: {error}") from error
        elif name == "command":
            import re  # (a command cue: its regex is checked as written)

            try:
                re.compile(value)
            except re.error as error:
                raise _fail(spec, f"command: not a valid regular expression ({error})") from error
            trigger.commands.append(value)
        elif name == "keyword":
            words = value.split()
            if not any(any(ch.isalnum() for ch in word) for word in words):
                raise _fail(spec, "keyword: needs a word")
            trigger.keywords.append(" ".join(words))
        elif name == "event":
            event = value.lower()
            if event not in EVENTS:
                raise _fail(spec, "unknown event", hint=f"events: {', '.join(EVENTS)}")
            trigger.event = event
        elif name == "cooldown":
            try:
                trigger.cooldown = parse_duration(value)
            except ValueError as error:
                raise _fail(spec, f"cooldown: {error}") from error
        else:
            relative = _patterns()["relative"].fullmatch(value)
            try:
                if relative:
                    if now is None:
                        raise ValueError("relative; store an absolute date (gate remember converts +30d)")
                    moment = now + parse_duration(relative.group(1))
                else:
                    moment = parse_time(value)
            except ValueError as error:
                raise _fail(spec, f"{name}: {error}") from error
            if name == "expires":
                trigger.expires = moment
            else:
                trigger.not_before = moment
    _check_combination(trigger)
    return trigger


def _check_combination(trigger: Trigger) -> None:
    """Clauses of one spec must be able to hold in the same hook event."""
    spec = trigger.spec
    kinds = [name for name, present in (("path", trigger.paths), ("command", trigger.commands),
                                        ("keyword", trigger.keywords)) if present]
    if len(kinds) > 1:
        raise _fail(spec, f"{' and '.join(kinds)} never hold at the same moment; write one --on for each")
    event = trigger.event
    allowed = {
        "path": ("pre-edit",),
        "command": ("pre-run",),
        "keyword": ("prompt",),
    }
    if event and kinds and event not in allowed[kinds[0]]:
        raise _fail(spec, f"{kinds[0]}: and event:{event} never hold at the same moment")
    if trigger.not_before is not None and trigger.expires is not None and trigger.not_before >= trigger.expires:
        raise _fail(spec, "not-before is not before expires: it would never fire")


def parse_all(specs: list[str]) -> list[Trigger]:
    if len(specs) > MAX_TRIGGERS:
        raise ValidationError(f"{len(specs)} triggers; at most {MAX_TRIGGERS}")
    return [parse(spec) for spec in specs]


def normalize(spec: str, now: float | None = None) -> str:
    """Write-time form of a spec: relative dates (+30d) become absolute, the rest is kept as written."""
    from gate.memory.cues import globs  # loaded once a glob is to be read

    moment = time.time() if now is None else now
    parse(spec, now=moment)  # validates, with the relative forms allowed

    parts = []
    for name, value in split_clauses(spec):
        relative = _patterns()["relative"].fullmatch(value) if name in ("expires", "not-before") else None
        if relative:
            value = format_time(moment + parse_duration(relative.group(1)))
        elif name == "path":
            value = globs.normalize_glob(value)
        parts.append(f"{name}:{value}")
    return ",".join(parts)


# --- a memory's triggers with its kind's defaults ------------------------------------------------------------------
def effective_triggers(record: dict[str, Any], defaults: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The triggers a memory fires on, in stored form. Its own cue triggers as written; a spec without a cue
    (only modifiers) and a memory without any spec get the kind's default cues, bounded by those modifiers."""
    parsed: list[Trigger] = []
    for spec in record.get("triggers") or []:
        try:
            parsed.append(parse(spec))
        except Exception:  # a spec this version cannot read never fires; `gate verify` reports it
            continue
    out = [t.to_json() for t in parsed if t.has_cue]
    cueless = [t for t in parsed if not t.has_cue]
    if not record.get("triggers"):
        cueless = [Trigger("")]
    for bound in cueless:
        for default in _default_cues(record, defaults):
            combined = dict(default)
            combined["default"] = True
            for name in ("not_before", "expires", "cooldown"):
                value = getattr(bound, name)
                if value is not None:
                    combined[name] = value
            if bound.spec:
                combined["spec"] = f"{combined['spec']},{bound.spec}"
            out.append(combined)
    return out


def _default_cues(record: dict[str, Any], defaults: dict[str, list[str]]) -> list[dict[str, Any]]:
    from gate.memory.cues import globs  # loaded once a glob is to be read

    cues: list[dict[str, Any]] = []
    for cue in defaults.get(record.get("kind", ""), []) or []:
        if cue == "paths":
            for glob in record.get("paths") or []:
                try:
                    normal = globs.normalize_glob(glob)
                except ValueError:
                    continue
                cues.append({"spec": f"path:{normal}", "paths": [normal]})
        else:
            try:
                cues.append(_default_trigger(cue).to_json())
            except Exception:
                continue
    return cues


@cache
def _default_trigger(cue: str) -> Trigger:
    """A kind's default cue, parsed once per process: a session start reads it for every standing memory
    (a hundred at 100,000 memories; parsing each again cost the hook ~3 ms)."""
    return parse(cue)
