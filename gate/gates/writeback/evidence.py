"""Write-back gate: what did this turn decide, fix or learn, and did it already decide about storing it?

Hot path (standard library only). Everything that recognises evidence is data in rules/writeback.toml:
regexes over the assistant's sentences (code removed, questions and hypotheticals ignored), over the user's
prompt (lasting preferences, decisions the user made), and over the turn's tools (an edit followed by a
passing run, in a turn that saw the run fail or was asked for a fix).

The rules' regexes are LazyPatterns (gate/literals.py): each is compiled only for a text that holds one of
the plain strings it requires, which spares a Stop hook compiling ~80 regexes per turn.
"""

from __future__ import annotations

from gate.literals import DOTALL, CompiledOnUse
from gate.rule_reading import kind_phrase, rule_patterns, rule_section
from gate.shellwords import program, setup_commands

TYPE_CHECKING = False  # typing and dataclasses cost the hook milliseconds to import; annotations are strings
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from gate.literals import LazyPattern
    from gate.session.turn import Turn

    Rules = Mapping[str, Any]

KINDS = ("decision", "fix", "gotcha", "preference", "learning")

# Code fences and inline code: compiled (re's cache) only for text that has a backquote or a tilde fence.
_FENCE = r"```.*?(?:```|$)|~~~.*?(?:~~~|$)"
_INLINE = r"`([^`\n]{0,80})`"
_FENCE_RE = CompiledOnUse(_FENCE, DOTALL)
_INLINE_RE = CompiledOnUse(_INLINE)
# Sentence ends: ". " before a capital, a line break, or a CJK full stop / exclamation / question mark.
_SENTENCE = CompiledOnUse(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(*_\[])|\n+|(?<=[。！？])")
_SPACE = CompiledOnUse(r"\s+")


class Evidence:
    __slots__ = ("features", "files", "kinds", "phrase", "quotes")

    def __init__(
        self,
        kinds: list[str] | None = None,
        quotes: list[str] | None = None,
        phrase: str = "",
        files: list[str] | None = None,
        features: dict[str, float] | None = None,
    ) -> None:
        self.kinds = list(kinds or [])  # ordered subset of KINDS
        self.quotes = list(quotes or [])  # at most max_quotes, each at most quote_chars
        self.phrase = phrase  # "a decision and a fix"
        self.files = list(files or [])  # files the turn edited: anchors for `gate remember --path`
        # where each kind was found, for the score: "decision" (a phrase of the reply), "user_decision" (of
        # the prompt), "tool_fix" (an edit, then a passing run) …
        self.features = dict(features or {})

    def __bool__(self) -> bool:
        return bool(self.kinds)

    def __repr__(self) -> str:
        return f"Evidence(kinds={self.kinds!r}, quotes={self.quotes!r}, files={self.files!r})"


class StoreDecision:
    __slots__ = ("detail", "kind", "ok")

    def __init__(self, kind: str, detail: str, ok: bool = True) -> None:
        self.kind = kind  # "stored" | "acknowledged"
        self.detail = detail  # the command, or the sentence that acknowledged
        self.ok = ok  # False when the store command's result was an error

    def __repr__(self) -> str:
        return f"StoreDecision(kind={self.kind!r}, detail={self.detail!r}, ok={self.ok})"


# ---------------------------------------------------------------------------------------------------------
# rules


def _limit(rules: Rules, key: str, default: int) -> int:
    value = rule_section(rules, "limits").get(key, default)
    return int(value) if isinstance(value, int) else default


# ---------------------------------------------------------------------------------------------------------
# sentences


def _code_text(match: re.Match[str]) -> str:
    return match.group(1)  # what r"\1" gives, without `re` (a template is parsed by re's Python code)


def sentences(text: str) -> list[str]:
    """Prose sentences of a text: fenced code removed, inline code unwrapped, one sentence per item."""
    prose = text
    if "```" in prose or "~~~" in prose:
        prose = _FENCE_RE.sub(" ", prose)
    if "`" in prose:
        prose = _INLINE_RE.sub(_code_text, prose)
    out = []
    for piece in _SENTENCE.split(prose):
        piece = _SPACE.sub(" ", piece).strip(" -*>#\t")
        if len(piece) > 3:
            out.append(piece)
    return out


def _quote(sentence: str, match: re.Match[str], width: int) -> str:
    if len(sentence) <= width:
        return sentence
    start = max(0, min(match.start() - width // 3, len(sentence) - width))
    piece = sentence[start : start + width - 2].strip()
    return ("…" if start else "") + piece + ("…" if start + width - 2 < len(sentence) else "")


class _Statements(list):  # type: ignore[type-arg]
    """The sentences that can carry evidence: no questions, nothing hypothetical or undecided. The ignore
    patterns are checked only on a sentence that some evidence pattern matched (then remembered): most
    sentences match none, and each ignore pattern compiled costs a Stop hook a few hundred microseconds."""

    def __init__(self, items: Iterable[str], ignore: Sequence[LazyPattern]) -> None:
        super().__init__(s for s in items if not s.rstrip().endswith(("?", "？")))
        self.ignore = ignore
        self.ignored: dict[str, bool] = {}

    def __getitem__(self, index: Any) -> Any:
        item = super().__getitem__(index)
        if isinstance(index, slice):
            part = _Statements((), self.ignore)
            part.extend(item)
            part.ignored = self.ignored
            return part
        return item

    def counts(self, sentence: str) -> bool:
        found = self.ignored.get(sentence)
        if found is None:
            found = self.ignored[sentence] = any(p.search(sentence) for p in self.ignore)
        return not found


def _statements(items: Iterable[str], ignore: Sequence[LazyPattern]) -> _Statements:
    return _Statements(items, ignore)


def _first_match(items: _Statements, patterns: Sequence[LazyPattern]) -> tuple[str, re.Match[str]] | None:
    for sentence in items:
        for pattern in patterns:
            match = pattern.search(sentence)
            if match and items.counts(sentence):
                return sentence, match
            if match:
                break  # an ignored sentence carries no evidence, whatever else it matches
    return None


# ---------------------------------------------------------------------------------------------------------
# tool evidence of a fix


class _Run:
    __slots__ = ("command", "passed", "seq")

    def __init__(self, seq: int, command: str, passed: bool) -> None:
        self.seq = seq
        self.command = command
        self.passed = passed


def _runs(turn: Turn, rules: Rules) -> list[_Run]:
    commands = rule_patterns(rules, "fix", "tools", key="run_commands")
    fails = rule_patterns(rules, "fix", "tools", key="fail_output", text=False)
    passes = rule_patterns(rules, "fix", "tools", key="pass_output", text=False)
    stores = rule_patterns(rules, "store", key="commands")
    runs = []
    for use in turn.tool_uses:
        command = use.input.get("command")
        if use.name != "Bash" or not isinstance(command, str) or not any(p.search(command) for p in commands):
            continue
        if any(p.search(command) for p in stores):
            continue  # storing a memory is not a run of the code
        result = turn.result_for(use.id)
        if result is None:
            continue
        output = result.text[-20000:]  # summaries sit at the end of test output
        failed = result.is_error or any(p.search(output) for p in fails)
        passed = not failed and (any(p.search(output) for p in passes) or not result.is_error)
        runs.append(_Run(result.seq, command.strip(), passed))
    return runs


def failed_commands(turn: Turn, rules: Rules) -> list[str]:
    """The runs of the turn that failed (not lints), each its first line with spaces collapsed: what a debugging
    loop runs again."""
    lint = rule_patterns(rules, "fix", "tools", key="lint_commands")
    failed = (r.command for r in _runs(turn, rules) if not r.passed and not any(p.search(r.command) for p in lint))
    return list(dict.fromkeys(" ".join(_short(command, 100).split()) for command in failed))


def _edits(turn: Turn, rules: Rules) -> list[tuple[int, str]]:
    tools = set(rule_section(rules, "fix", "tools").get("edit_tools", []))
    out = []
    for use in turn.tool_uses:
        if use.name not in tools:
            continue
        result = turn.result_for(use.id)
        if result is not None and result.is_error:
            continue  # an edit that did not apply changed nothing
        path = next((use.input.get(k) for k in ("file_path", "notebook_path", "path") if use.input.get(k)), "")
        out.append((use.seq, str(path)))
    return out


def _short(command: str, width: int = 60) -> str:
    line = command.splitlines()[0] if command else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def _tool_fix(turn: Turn, rules: Rules) -> tuple[str, list[str], bool] | None:
    """An edit followed by a passing run, in a turn that saw a run fail or was asked to fix something:
    (quote, files edited, confirmed). Confirmed: the program that failed before the edits passes after them;
    a build that passes after edits the prompt asked for confirms only that it builds."""
    edits = _edits(turn, rules)
    if not edits:
        return None
    lint = rule_patterns(rules, "fix", "tools", key="lint_commands")
    runs = [r for r in _runs(turn, rules) if not any(p.search(r.command) for p in lint)]
    first_edit = edits[0][0]
    passed_after = [r for r in runs if r.passed and r.seq > first_edit]
    if not passed_after:
        return None
    success = passed_after[0]  # the first green run after editing is the one the edits made pass
    failed_before = [r for r in runs if not r.passed and r.seq < success.seq]
    asked = any(p.search(turn.prompt) for p in rule_patterns(rules, "fix", "tools", key="prompt_asks"))
    if not failed_before and not asked:
        return None
    if failed_before:
        # Only tests edited between the last failure and the pass: a test brought up to date with the code (it
        # expected the old output), not a fix.
        last_failure = failed_before[-1].seq
        between = [path for seq, path in edits if last_failure < seq < success.seq]
        test_paths = rule_patterns(rules, "fix", "tools", key="test_paths")
        if between and all(any(p.search(path) for p in test_paths) for path in between):
            return None
    # Confirmed: the program that failed before the edits passes after them, or tests pass that the prompt
    # asked to be fixed. A build or a lint that passes says only that the code builds.
    tests = rule_patterns(rules, "fix", "tools", key="test_commands")
    setup = setup_commands(rules)
    confirmed = any(program(r.command, setup) == program(success.command, setup) for r in failed_before) or (
        asked and any(p.search(success.command) for p in tests)
    )
    files = list(dict.fromkeys(path.rsplit("/", 1)[-1] for seq, path in edits if seq < success.seq and path))
    names = ", ".join(files[:3]) + (" …" if len(files) > 3 else "")
    section = rule_section(rules, "fix", "tools")
    if failed_before:
        template = str(section.get("quote_recovered", "`{command}` failed, then passed after edits to {files}"))
    else:
        template = str(section.get("quote", "edited {files}; `{command}` then passed"))
    edited = [path for seq, path in edits if seq < success.seq and path]
    return template.format(command=_short(success.command), files=names or "files"), edited, confirmed


# ---------------------------------------------------------------------------------------------------------
# the verdicts


def find_evidence(turn: Turn, rules: Rules) -> Evidence:
    """The kinds of memory-worthy things the turn holds, with short quotes showing where."""
    width = _limit(rules, "quote_chars", 160)
    text = turn.text[-_limit(rules, "max_text_chars", 20000) :]
    ignore = rule_patterns(rules, "sentences", key="ignore")
    said = _statements(sentences(text), ignore)
    asked = sentences(turn.prompt[:8000])
    asked_statements = _statements(asked, ignore)

    found: dict[str, str] = {}
    features: dict[str, float] = {}
    files: list[str] = []
    for kind in ("decision", "fix", "gotcha", "learning"):
        hit = _first_match(said, rule_patterns(rules, kind))
        if hit:
            features[kind] = 1.0
        elif kind == "decision":
            hit = _first_match(asked_statements, rule_patterns(rules, kind))  # a choice the user made
            if hit:
                features["user_decision"] = 1.0
        if hit:
            found[kind] = _quote(hit[0], hit[1], width)
    tool_fix = _tool_fix(turn, rules)
    if tool_fix:
        features["tool_fix" if tool_fix[2] else "tool_fix_unconfirmed"] = 1.0
        found.setdefault("fix", tool_fix[0])
        files = tool_fix[1]
    if "fix" in found and not (tool_fix and tool_fix[2]):
        # A cause stated is a hypothesis until something confirms it: the reply says it works now. Unconfirmed,
        # it defers to the next prompt (the veto unconfirmed_fix, rules/writeback.toml [score]).
        confirmed = _first_match(said[-12:], rule_patterns(rules, "fix", key="confirmed"))
        features["confirmed" if confirmed else "unconfirmed_fix"] = 1.0
    preference = _first_match(
        _statements(asked, rule_patterns(rules, "preference", key="ignore")), rule_patterns(rules, "preference")
    )
    if preference:
        features["preference"] = 1.0
        found["preference"] = _quote(preference[0], preference[1], width)
    else:  # the user's own words for a rule: "use a column, not a tag", "I don't want X, I want Y"
        rule = _first_match(asked_statements, rule_patterns(rules, "preference", key="user_rules"))
        if rule:
            features["user_rule"] = 1.0
            found["preference"] = _quote(rule[0], rule[1], width)

    order = [k for k in rule_section(rules, "phrases").get("order", KINDS) if k in found]
    order += [k for k in KINDS if k in found and k not in order]
    if not files:
        files = [path for _, path in _edits(turn, rules) if path]
    quotes = [found[k] for k in order][: _limit(rules, "max_quotes", 3)]
    return Evidence(order, quotes, kind_phrase(order, rules), list(dict.fromkeys(files)), features)


def find_store_decision(turn: Turn, rules: Rules, answering: bool = False) -> StoreDecision | None:
    """A `gate remember|link|forget|edit|import` run in the turn, else an explicit 'nothing to store'.
    `answering`: the turn answers a block or a reminder — the message's own words count too ([store] answers)."""
    commands = rule_patterns(rules, "store", key="commands")
    for use in turn.tool_uses:
        command = use.input.get("command")
        if use.name == "Bash" and isinstance(command, str) and any(p.search(command) for p in commands):
            result = turn.result_for(use.id)
            return StoreDecision("stored", command.strip(), ok=not (result is not None and result.is_error))
    acknowledgements = rule_patterns(rules, "store", key="acknowledgements")
    if answering:
        acknowledgements = [*acknowledgements, *rule_patterns(rules, "store", key="answers")]
    for sentence in sentences(turn.text):
        for pattern in acknowledgements:
            if pattern.search(sentence):
                return StoreDecision("acknowledged", sentence[: _limit(rules, "quote_chars", 160)])
    return None
