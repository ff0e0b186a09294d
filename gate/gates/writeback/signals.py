"""What a turn did, beyond what it said (hot path, standard library only): the write-back gate's structural
signals. Each is a number (mostly 0 or 1) named in rules/writeback.toml, where the score weighs them.

- choice: the user picked between alternatives the previous reply offered ("the second one", "B");
  decides: the prompt settles a choice in so many words ("let's stick with local", "用 fetch 的好了").
- correction: the user corrected the agent ("no, it should follow role.name"); concedes: the reply takes a
  correction ("you're right, I should have used the /pr skill").
- recovered: a command failed and a later, different command succeeded (an environment fact learned by trial).
- edits: files the turn edited (capped); runs: test/build runs.
- asks_user: the reply ends by asking the user to choose or to answer — the turn waits on the user.
- explanation_only: no tool at all: an answer from what the model knows.
- wrote_notes: the turn wrote the lesson itself into a durable notes place (CLAUDE.md, a memory file, a
  notes vault, a skill file, a memory tool).
- machine_prompt: the "prompt" was written by a program (a background task's notification), not a person
  (a notification that brings a subagent's report is weighed on the report instead: gate/gates/writeback/gate.py);
  agent_prompt: by another agent (a teammate's message): its reader carries the work on, not a person.
- bare_choice: the pick is a bare option number or "continue": not by itself the user's decision.
- acknowledges: the reply takes what the user said on board ("got it", "understood", "好的").
- continues: the prompt only says go on ("continue", "繼續"): the turn's edits are the plan's work, not a lesson.

The phrases are data (regexes in several languages); what they are worth is the score's business.
"""

from __future__ import annotations

from gate.literals import DOTALL, CompiledOnUse, LazyPattern
from gate.rule_reading import rule_patterns, rule_section
from gate.shellwords import main_command, program, setup_commands

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence
    from typing import Any

    from gate.session.turn import Turn

    Rules = Mapping[str, Any]

# Compiled at first use, from the program an earlier process kept (gate/literals.py).
_FENCED = CompiledOnUse(r"```.*?(?:```|$)", DOTALL)
_REDIRECT = CompiledOnUse(r">>?\s*(\S+)")  # where a shell redirect writes
_PARAGRAPH_BREAK = CompiledOnUse(r"\n\s*\n")
_END_CHARS = 600  # the end of the reply: where it asks the user something


def _any(patterns: Sequence[LazyPattern], text: str) -> bool:
    return any(p.search(text) for p in patterns)


def _number(rules: Rules, key: str, default: int) -> int:
    value = rule_section(rules, "signals").get(key, default)
    return int(value) if isinstance(value, int) else default


def _tail(text: str, chars: int) -> str:
    """The last `chars` characters, code fences dropped (a question in a code sample asks nobody). The cut may
    fall inside a code block: its rest is dropped up to its closing fence, not paired with the next opening one
    (which swallowed the prose between them, a closing question included)."""
    start = max(0, len(text) - chars * 2)
    tail = text[start:]
    if "```" in tail:
        if text.count("```", 0, start) % 2:  # the cut falls inside a code block: what is left of it goes first
            tail = tail[tail.find("```") + 3 :]
        tail = _FENCED.sub(" ", tail)
    return tail[-chars:].strip()


def asks_user(text: str, rules: Rules) -> bool:
    """Does the reply end by asking the user something they must answer before work goes on?"""
    tail = _tail(text, _END_CHARS)
    if not tail:
        return False
    last = tail.rstrip(" *_`\n")
    final = _PARAGRAPH_BREAK.split(last)[-1] if "\n" in last else last
    if _any(rule_patterns(rules, "signals", key="courtesy_questions"), final[-200:]):
        return False  # "want me to commit?" after finished work: the obvious next step, not a choice
    if final.endswith(("?", "？")):
        return True
    return _any(rule_patterns(rules, "signals", key="asks_user"), tail)


def recovered(turn: Turn, rules: Rules) -> tuple[str, str] | None:
    """A command that failed, then a different command that succeeded: (failed, worked)."""
    runs = rule_patterns(rules, "signals", key="recovery_ignores")
    setup = setup_commands(rules)
    failed: list[tuple[int, str]] = []
    for use in turn.tool_uses:
        command = use.input.get("command")
        if use.name != "Bash" or not isinstance(command, str) or not command.strip():
            continue
        if _any(runs, main_command(command, setup)):
            continue  # judged by the program it runs: `cd web && ls` is a listing
        result = turn.result_for(use.id)
        if result is None:
            continue
        if result.is_error:
            failed.append((use.seq, command.strip()))
        elif failed and command.strip() not in {c for _, c in failed}:
            before = failed[-1][1]
            any_program = rule_section(rules, "signals").get("recovery_any_program")
            if any_program or program(before, setup) == program(command, setup):
                return before, command.strip()
    return None


def _edited_paths(turn: Turn) -> list[str]:
    out = []
    for use in turn.tool_uses:
        result = turn.result_for(use.id)
        if result is not None and result.is_error:
            continue
        for key in ("file_path", "notebook_path", "path"):
            value = use.input.get(key)
            if isinstance(value, str) and value and use.name in ("Edit", "Write", "MultiEdit", "NotebookEdit"):
                out.append(value)
    return out


def wrote_notes(turn: Turn, rules: Rules) -> str:
    """The notes place the turn wrote to ('' when none): a file, a memory tool, a shell redirect into one."""
    paths = rule_patterns(rules, "signals", key="notes_paths")
    for path in _edited_paths(turn):
        if _any(paths, path):
            return path
    tools = rule_patterns(rules, "signals", key="notes_tools")
    for use in turn.tool_uses:
        if _any(tools, use.name):
            return use.name
        command = use.input.get("command")
        if use.name == "Bash" and isinstance(command, str) and ">" in command:
            for target in _REDIRECT.findall(command):
                if _any(paths, target):
                    return target
    return ""


def turn_signals(turn: Turn, rules: Rules, wanted: Collection[str] | None = None) -> dict[str, float]:
    """The structural signals of the turn that hold, by name; only those in `wanted` when it is given (the
    write-back gate asks for the ones its score weighs, and for the vetoes only when the score is reached:
    each costs regexes a Stop hook would otherwise compile for nothing)."""
    out: dict[str, float] = {}
    prompt = turn.prompt[:4000]

    def want(*names: str) -> bool:
        return wanted is None or any(name in wanted for name in names)

    if want("machine_prompt") and _any(rule_patterns(rules, "signals", key="machine_prompt"), prompt[:200]):
        out["machine_prompt"] = 1.0
    if want("agent_prompt") and _any(rule_patterns(rules, "signals", key="agent_prompt"), prompt[:200]):
        out["agent_prompt"] = 1.0
    short = len(prompt.strip()) <= _number(rules, "choice_max_chars", 300)
    # A question weighs options; it does not pick one ("…嗎？目前在的": the question mark near the end counts).
    asking = any(mark in prompt.rstrip()[-40:] for mark in ("?", "？")) or prompt.rstrip().endswith(("嗎", "吗"))
    if want("decides", "choice", "bare_choice") and short and not asking:
        if _any(rule_patterns(rules, "signals", key="decides"), prompt):
            out["decides"] = 1.0
        elif (
            turn.previous_reply
            and _any(rule_patterns(rules, "signals", key="choice"), prompt)
            and _any(rule_patterns(rules, "signals", key="options_offered"), _tail(turn.previous_reply, 1500))
        ):
            # "1", "b", "continue": a pick, but not by itself the user's decision (it may be routine work)
            bare = _any(rule_patterns(rules, "signals", key="bare_choice"), prompt.strip())
            out["bare_choice" if bare else "choice"] = 1.0
    if want("continues") and short and _any(rule_patterns(rules, "signals", key="continues"), prompt.strip()):
        out["continues"] = 1.0  # only "go on": the edits are the plan's work
    if want("correction") and prompt and _any(rule_patterns(rules, "signals", key="correction"), prompt[:600]):
        out["correction"] = 1.0
    if want("concedes") and turn.text and _any(rule_patterns(rules, "signals", key="concedes"), turn.text[:400]):
        out["concedes"] = 1.0
    # (anchored at the reply's start: its first 60 characters are all the patterns can match)
    if want("acknowledges") and turn.text and _any(rule_patterns(rules, "signals", key="acknowledges"),
                                                   turn.text.lstrip()[:60]):
        out["acknowledges"] = 1.0
    if want("recovered") and recovered(turn, rules):
        out["recovered"] = 1.0
    if want("asked_fix") and prompt and _any(rule_patterns(rules, "fix", "tools", key="prompt_asks"), prompt[:2000]):
        out["asked_fix"] = 1.0
    if want("investigated"):
        look = set(rule_section(rules, "signals").get("look_tools", []))
        if sum(1 for use in turn.tool_uses if use.name in look) >= 3:
            out["investigated"] = 1.0
    conclusion = rule_patterns(rules, "signals", key="conclusion") if want("conclusion") else []
    if conclusion and turn.text and _any(conclusion, _tail(turn.text, 2000)):
        out["conclusion"] = 1.0
    if want("edits"):
        edited = _edited_paths(turn)
        if edited:
            out["edits"] = float(min(len(set(edited)), _number(rules, "edits_cap", 5)))
    if want("explanation_only") and not turn.tool_uses and turn.complete:  # (read back to its prompt: tools known)
        out["explanation_only"] = 1.0
    if want("asks_user") and turn.text and asks_user(turn.text, rules):
        out["asks_user"] = 1.0
    if want("wrote_notes") and wrote_notes(turn, rules):
        out["wrote_notes"] = 1.0
    return out


def signal_quotes(turn: Turn, features: Mapping[str, float], rules: Rules) -> list[str]:
    """What the MEMORY CHECK quotes for the structural signals that counted."""
    out = []
    width = int(rule_section(rules, "limits").get("quote_chars", 160))
    if features.get("choice") or features.get("correction"):
        said = " ".join(turn.prompt.split())
        out.append("the user: " + (said if len(said) <= width else said[: width - 1] + "…"))
    found = recovered(turn, rules) if features.get("recovered") else None
    if found:
        failed, worked = (line.splitlines()[0][:60] for line in found)
        out.append(f"`{failed}` failed, then `{worked}` worked")
    return out
