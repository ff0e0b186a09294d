"""The agents rows (issue 45): the same hooks serving Claude Code, Codex CLI and Gemini CLI, side by side in one
interleaved group at one store size, each against the floor measured in it.

For each agent: the recall hook on a shift prompt (hits injected; Gemini: BeforeAgent), the Stop hook on an
evidence turn (Claude Code: the JSONL transcript of bench/transcript.py; Codex: the same turn as a rollout,
bench/rollout.py; Gemini: AfterAgent on the same turn as a chat recording, bench/gemini_chat.py) and the refusal of
the turn's first edit while the turn owes the agent's search (Claude Code: PreToolUse on Edit; Codex: PreToolUse
on apply_patch; Gemini: BeforeTool on replace). Each other agent's hook is the command `gate install --agent …`
wires: the same hook with `--agent codex` or `--agent gemini` (gate/hosts/*/hook_io.py read its events and write
its verdicts). Each Codex row checks its answer against Codex's strict output schema, each Gemini row against what
Gemini CLI 0.61 acts on; the targets hold each agent's ratio within 0.05 of Claude Code's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from bench import prompts
from bench.measure import Candidate, Check, measure_group, run_once
from bench.report import Section
from bench.rollout import PATCH
from bench.search_first import PROMPT_ID, REFUSAL_MARK, owe_search
from bench.spawn import tool_event
from bench.transcript import Transcript, format_size

CLAUDE = "Claude Code"
CODEX = "Codex"
GEMINI = "Gemini"
AGENT_ARGS = ["--agent", "codex"]  # what gate/hosts/codex/install.py appends to the hook's command
GEMINI_ARGS = ["--agent", "gemini"]  # what gate/hosts/gemini/install.py appends
OTHER_AGENTS = (CODEX, GEMINI)  # each measured beside Claude Code
CODEX_MODEL = "gpt-5.5"
RECALL_MARK = "MEMORY SEARCH REQUIRED"

# The fields Codex CLI 0.171 accepts in a hook's answer, per event (its output schemas: additionalProperties
# false, so any other field makes the whole answer invalid). Written here from the reading of the CLI,
# not taken from gate's host module: the check must not agree with gate by construction.
CODEX_FIELDS: dict[str, frozenset[str]] = {
    "UserPromptSubmit": frozenset({"hookEventName", "additionalContext"}),
    "PreToolUse": frozenset({"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason"}),
}


# The fields of a hook's answer Gemini CLI 0.61 reads (DefaultHookOutput: any other is ignored, not refused). It
# blocks on a top-level decision "block" or "deny" (with the reason), never on hookSpecificOutput's
# permissionDecision (Claude Code's spelling), and takes hookSpecificOutput.additionalContext as context.
GEMINI_FIELDS = frozenset({"continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason",
                           "hookSpecificOutput"})
GEMINI_BLOCKS = ("block", "deny")

_TRANSCRIPT_KIND = {CLAUDE: "JSONL transcript", CODEX: "rollout", GEMINI: "chat recording"}
_EDIT_TOOL = {CLAUDE: "Edit", CODEX: "apply_patch", GEMINI: "replace"}


def shift_row(agent: str) -> str:
    return f"gate recall hook, shift prompt (hits), {agent}"


def stop_row(agent: str, size: int) -> str:
    return f"gate Stop hook, evidence turn, {agent} ({format_size(size)} {_TRANSCRIPT_KIND[agent]})"


def refusal_row(agent: str) -> str:
    return f"gate PreToolUse hook, first edit refused until the agent's search, {agent} ({_EDIT_TOOL[agent]})"


# --- Codex's events, as Codex CLI 0.171 writes them on a hook's stdin ----------------------------------------
def codex_event(session: str, turn: str, transcript: Path, cwd: Path, name: str, **fields: Any) -> bytes:
    event = {
        "session_id": session,
        "turn_id": turn,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "hook_event_name": name,
        "model": CODEX_MODEL,
        "permission_mode": "default",
        **fields,
    }
    return json.dumps(event).encode()


def codex_turn(session: str, prompt: str) -> str:
    return prompts.session_id(f"{session}/turn/{prompt}")


# --- Gemini's events, as Gemini CLI 0.61 writes them on a hook's stdin (gate/hosts/gemini/hook_io.py) -----------
def gemini_event(session: str, transcript: Path, cwd: Path, name: str, **fields: Any) -> bytes:
    event = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "hook_event_name": name,
        "timestamp": "2026-03-02T09:30:00.000Z",
        **fields,
    }
    return json.dumps(event).encode()


# --- checks: each row did what its name says, in its agent's schema --------------------------------------------
def _answer(out: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(out)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _codex_specific(event: str, out: bytes) -> tuple[dict[str, Any] | None, str]:
    """The hookSpecificOutput of an answer Codex takes for `event`, or why Codex would reject the answer."""
    answer = _answer(out)
    if answer is None or set(answer) != {"hookSpecificOutput"}:
        return None, f"not a Codex {event} answer: {out[:200]!r}"
    specific = answer["hookSpecificOutput"]
    if not isinstance(specific, dict) or specific.get("hookEventName") != event:
        return None, f"hookSpecificOutput names no {event}: {out[:200]!r}"
    unknown = set(specific) - CODEX_FIELDS[event]
    if unknown:
        return None, f"fields Codex rejects: {sorted(unknown)}"
    return specific, ""


GATE_COMMANDS = ("gate search", "gate show", "gate remember")


def bare_gate(text: str) -> str | None:
    """A gate command the text names by plain `gate` (not by its path, `…/gate search`), or None. Codex runs the
    agent's commands in a login shell whose PATH may not hold gate, so its host names gate by absolute path
    (gate/hosts/codex/hook_io.py); the section puts gate on the hooks' PATH, where Claude Code's say `gate`."""
    for command in GATE_COMMANDS:
        at = text.find(command)
        while at >= 0:
            if at == 0 or text[at - 1] != "/":
                return command
            at = text.find(command, at + 1)
    return None


def _codex_text(text: str) -> str | None:
    bare = bare_gate(text)
    return f"names {bare!r} by plain `gate`, which Codex's login shell may not find" if bare else None


def _gemini_answer(out: bytes) -> tuple[dict[str, Any] | None, str]:
    """An answer Gemini reads, or why it is none: JSON of its fields only (others would be lost)."""
    answer = _answer(out)
    if answer is None:
        return None, f"not a Gemini answer: {out[:200]!r}"
    unknown = set(answer) - GEMINI_FIELDS
    if unknown:
        return None, f"fields Gemini does not read: {sorted(unknown)}"
    return answer, ""


def _check_gemini(event: str, out: bytes) -> str | None:
    """Whether Gemini, reading `out` at `event`, does what the row claims: BeforeAgent's context with the recall,
    AfterAgent's block with the MEMORY CHECK, BeforeTool's refusal naming the search."""
    answer, problem = _gemini_answer(out)
    if answer is None:
        return problem
    blocks = answer.get("decision") in GEMINI_BLOCKS
    reason = answer.get("reason")
    if event == "BeforeAgent":
        specific = answer.get("hookSpecificOutput")
        context = specific.get("additionalContext") if isinstance(specific, dict) else None
        if blocks or answer.get("continue") is False:
            return f"the prompt would be blocked: {out[:200]!r}"
        if not isinstance(context, str) or RECALL_MARK not in context:
            return f"no additionalContext with {RECALL_MARK!r}: {out[:200]!r}"
        return None
    if not blocks or not isinstance(reason, str) or not reason.strip():
        return f"Gemini would not block: no top-level decision block/deny with a reason: {out[:200]!r}"
    if event == "BeforeTool" and REFUSAL_MARK not in reason:
        return f"refused without the search named: {reason[:200]!r}"
    return None


def check_shift(agent: str) -> Check:
    def check(rc: int, out: bytes, err: bytes) -> str | None:
        if rc != 0:
            return f"exit {rc}: {err.decode(errors='replace')[-200:]}"
        if agent == GEMINI:
            return _check_gemini("BeforeAgent", out)
        if agent == CODEX:
            specific, problem = _codex_specific("UserPromptSubmit", out)
            if specific is None:
                return problem
        else:
            specific = ((_answer(out) or {}).get("hookSpecificOutput") or {})
        context = specific.get("additionalContext")
        if not isinstance(context, str) or RECALL_MARK not in context:
            return f"no additionalContext with {RECALL_MARK!r}: {out[:200]!r}"
        return _codex_text(context) if agent == CODEX else None

    return check


def check_stop(agent: str) -> Check:
    def check(rc: int, out: bytes, err: bytes) -> str | None:
        if agent == GEMINI:
            return f"exit {rc}: {err.decode(errors='replace')[-200:]}" if rc else _check_gemini("AfterAgent", out)
        answer = _answer(out) or {}
        if agent == CLAUDE:  # Claude Code's block (gate.hook.claude_code_stop): the Stop's additionalContext from
            # the CLI version rules/writeback.toml names, `decision: block` before it or when the transcript names none
            specific = answer.get("hookSpecificOutput") if set(answer) == {"hookSpecificOutput"} else None
            reason = specific.get("additionalContext") if isinstance(specific, dict) else None
            if set(answer) == {"decision", "reason"} and answer.get("decision") == "block":
                reason = answer.get("reason")
            if rc != 0 or not isinstance(reason, str) or not reason.strip():
                return f"exit {rc}, no block: {out[:200]!r} {err.decode(errors='replace')[-200:]}"
            return None
        reason = answer.get("reason")
        if rc != 0 or answer.get("decision") != "block" or not isinstance(reason, str) or not reason.strip():
            return f"exit {rc}, no block: {out[:200]!r} {err.decode(errors='replace')[-200:]}"
        if agent == CODEX and set(answer) != {"decision", "reason"}:
            return f"fields Codex rejects in a Stop answer: {sorted(set(answer) - {'decision', 'reason'})}"
        return _codex_text(reason) if agent == CODEX else None

    return check


def check_refusal(agent: str) -> Check:
    def check(rc: int, out: bytes, err: bytes) -> str | None:
        if rc != 0:
            return f"exit {rc}: {err.decode(errors='replace')[-200:]}"
        if agent == GEMINI:
            return _check_gemini("BeforeTool", out)
        if agent == CODEX:
            specific, problem = _codex_specific("PreToolUse", out)
            if specific is None:
                return problem
        else:
            specific = ((_answer(out) or {}).get("hookSpecificOutput") or {})
        reason = specific.get("permissionDecisionReason")
        if specific.get("permissionDecision") != "deny" or not isinstance(reason, str):
            return f"not refused: {out[:200]!r}"
        if REFUSAL_MARK not in reason:
            return f"refused without the search named: {reason[:200]!r}"
        return _codex_text(reason) if agent == CODEX else None

    return check


# --- the section -----------------------------------------------------------------------------------------------
def agents_section(opts: Any, gate: Any, store: Any, transcript: Transcript, rollout: Transcript, chat: Transcript,
                   floor: Candidate, log: Any) -> Section:
    """floor, and each hook for Claude Code, for Codex and for Gemini — one interleaved group."""
    env = with_gate_on_path(gate.env(store.home, store.project), gate.cli)
    project = store.project
    codex_hook = [*gate.hook, *AGENT_ARGS]
    gemini_hook = [*gate.hook, *GEMINI_ARGS]

    # The recall hook on a shift: a fresh session per run whose first prompt (untimed) is on another topic.
    def claude_prompt(index: int, text: str) -> bytes:
        return prompts.prompt_event(prompts.session_id("agents-claude-shift", index), text, transcript.path, project)

    def codex_prompt(index: int, text: str) -> bytes:
        session = prompts.session_id("agents-codex-shift", index)
        return codex_event(session, codex_turn(session, text), rollout.path, project, "UserPromptSubmit", prompt=text)

    def gemini_prompt(index: int, text: str) -> bytes:
        return gemini_event(prompts.session_id("agents-gemini-shift", index), chat.path, project, "BeforeAgent",
                            prompt=text)

    # The first edit of a turn that owes the agent's search: the ledger the recall hook leaves, written first.
    claude_edit = {"file_path": str(project / "src" / "payments" / "waterfall.py"),
                   "old_string": "    ReserveAccount(ledger).trigger()",
                   "new_string": "    if ledger.last_run_id != run_id:\n        ReserveAccount(ledger).trigger()\n"
                                 "        ledger.last_run_id = run_id"}

    def claude_tool(index: int) -> bytes:
        return tool_event(prompts.session_id("agents-claude-edit", index), transcript.path, project, "Edit",
                          claude_edit, prompt_id=PROMPT_ID)

    def codex_tool(index: int) -> bytes:
        return codex_event(prompts.session_id("agents-codex-edit", index), PROMPT_ID, rollout.path, project,
                           "PreToolUse", tool_name="apply_patch", tool_input={"command": PATCH},
                           tool_use_id="call_bench")

    def gemini_tool(index: int) -> bytes:
        return gemini_event(prompts.session_id("agents-gemini-edit", index), chat.path, project, "BeforeTool",
                            tool_name="replace", tool_input=claude_edit)

    def claude_stop(index: int) -> bytes:
        return prompts.stop_event(prompts.session_id("agents-claude-stop", index), transcript.path, project,
                                  transcript.last_assistant_message)

    def codex_stop(index: int) -> bytes:
        session = prompts.session_id("agents-codex-stop", index)
        return codex_event(session, codex_turn(session, "stop"), rollout.path, project, "Stop",
                           stop_hook_active=False, last_assistant_message=rollout.last_assistant_message)

    def gemini_stop(index: int) -> bytes:
        return gemini_event(prompts.session_id("agents-gemini-stop", index), chat.path, project, "AfterAgent",
                            prompt=prompts.SHIFT, prompt_response=chat.last_assistant_message, stop_hook_active=False)

    fresh = "fresh session per run"
    pairs = [
        (
            Candidate(shift_row(CLAUDE), gate.hook, env=env, cwd=project,
                      stdin=lambda i: claude_prompt(i, prompts.SHIFT),
                      prepare=lambda i: _once(gate.hook, claude_prompt(i, prompts.SHIFT_BEFORE), env, project),
                      check=check_shift(CLAUDE), note=f"{fresh}, one untimed prompt on another topic first"),
            Candidate(shift_row(CODEX), codex_hook, env=env, cwd=project,
                      stdin=lambda i: codex_prompt(i, prompts.SHIFT),
                      prepare=lambda i: _once(codex_hook, codex_prompt(i, prompts.SHIFT_BEFORE), env, project),
                      check=check_shift(CODEX), note=f"{fresh}, one untimed prompt on another topic first; "
                                                     "the answer held to Codex's UserPromptSubmit schema"),
            Candidate(shift_row(GEMINI), gemini_hook, env=env, cwd=project,
                      stdin=lambda i: gemini_prompt(i, prompts.SHIFT),
                      prepare=lambda i: _once(gemini_hook, gemini_prompt(i, prompts.SHIFT_BEFORE), env, project),
                      check=check_shift(GEMINI), note=f"{fresh}, one untimed prompt on another topic first; "
                                                       "BeforeAgent, its context as Gemini reads it"),
        ),
        (
            Candidate(stop_row(CLAUDE, transcript.target), gate.hook, env=env, cwd=project, stdin=claude_stop,
                      check=check_stop(CLAUDE), note=fresh),
            Candidate(stop_row(CODEX, rollout.target), codex_hook, env=env, cwd=project, stdin=codex_stop,
                      check=check_stop(CODEX), note=f"{fresh}; the answer held to Codex's Stop schema"),
            Candidate(stop_row(GEMINI, chat.target), gemini_hook, env=env, cwd=project, stdin=gemini_stop,
                      check=check_stop(GEMINI), note=f"{fresh}; AfterAgent, a block Gemini acts on"),
        ),
        (
            Candidate(refusal_row(CLAUDE), gate.hook, env=env, cwd=project, stdin=claude_tool,
                      prepare=lambda i: owe_search(store.home, prompts.session_id("agents-claude-edit", i)),
                      check=check_refusal(CLAUDE), note="a fresh owing session per run"),
            Candidate(refusal_row(CODEX), codex_hook, env=env, cwd=project, stdin=codex_tool,
                      prepare=lambda i: owe_search(store.home, prompts.session_id("agents-codex-edit", i)),
                      check=check_refusal(CODEX),
                      note="a fresh owing session per run; a deny held to Codex's PreToolUse schema"),
            Candidate(refusal_row(GEMINI), gemini_hook, env=env, cwd=project, stdin=gemini_tool,
                      prepare=lambda i: owe_search(store.home, prompts.session_id("agents-gemini-edit", i)),
                      check=check_refusal(GEMINI),
                      note="a fresh owing session per run; BeforeTool, a deny Gemini acts on"),
        ),
    ]
    group = [floor, *(cand for pair in pairs for cand in pair)]
    log(f"agents at {store.size:,} memories: {len(group)} candidates x {opts.runs} runs")
    notes: list[str] = []
    results = measure_group(group, opts.runs, opts.warmup, seed=opts.seed + 45, progress=log, python=opts.python,
                            notes=notes)
    info = [
        f"store: {store.size:,} memories",
        f"Claude Code transcript: {transcript.size:,} bytes, {transcript.lines:,} lines; Codex rollout of the same "
        f"last turn: {rollout.size:,} bytes, {rollout.lines:,} lines; Gemini chat recording of it: "
        f"{chat.size:,} bytes, {chat.lines:,} lines",
        f"Codex rows: the hook command `gate install --agent codex` wires ({' '.join(AGENT_ARGS)}); Gemini rows: "
        f"`gate install --agent gemini`'s ({' '.join(GEMINI_ARGS)})",
    ]
    return Section(
        key="agents",
        title=f"Agents: Claude Code, Codex and Gemini, {store.size:,} memories",
        rows=[results[c.name] for c in group],
        reference=floor.name,
        info=info + notes,
    )


def with_gate_on_path(env: dict[str, str], cli: list[str]) -> dict[str, str]:
    """The env with gate's own bin directory first on PATH, as an installed gate is for the agent's hooks: then
    only the Codex host's absolute spelling names gate by path (and the checks can tell which host answered)."""
    script = Path(cli[0])
    if len(cli) != 1 or script.name != "gate":
        return env
    return {**env, "PATH": os.pathsep.join([str(script.parent), env.get("PATH", "")])}


def _once(argv: list[str], stdin: bytes, env: dict[str, str], cwd: Path) -> None:
    run_once(argv, stdin, env, cwd)


def pairs(transcript_size: int) -> list[tuple[str, str, str, str]]:
    """(what, the other agent, Claude Code's row, that agent's row) for each hook the section measures and each
    agent beside Claude Code, for the targets."""
    return [
        pair
        for agent in OTHER_AGENTS
        for pair in (
            ("recall hook, shift", agent, shift_row(CLAUDE), shift_row(agent)),
            ("Stop hook, evidence turn", agent, stop_row(CLAUDE, transcript_size), stop_row(agent, transcript_size)),
            ("first edit refused", agent, refusal_row(CLAUDE), refusal_row(agent)),
        )
    ]
