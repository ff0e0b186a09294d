"""Front door 1 (hot path): `python -m gate.hook [--agent codex|gemini]` — read one hook event on stdin, let its
gate decide, print one JSON object or nothing, and audit the evaluation.

The gates read events in Claude Code's spelling and answer in it. The agent the hook serves is named by the
command `gate install` wires (`--agent codex`, `--agent gemini`; none: Claude Code); for another agent than
Claude Code its host module (gate/hosts/<agent>/hook_io.py, imported only then) reads the event into those terms
(its event names too: Gemini's BeforeAgent is UserPromptSubmit) and writes the answer in that agent's schema.
For Claude Code itself a Stop's block goes out as the Stop's additionalContext, or as `decision: block` to a
CLI older than the one that takes it (claude_code_stop).

Standard library and tantivy only, imported per event. It fails open: any error ends with exit 0, no
stdout, and one line in the error log. It never blocks a user prompt and never blocks compaction — the
only event that may answer "block" is Stop, and only through the write-back gate; the only tool call it may
refuse is the first change of a turn that owes the agent's own search (gate/gates/recall/search_first.py).
"""

from __future__ import annotations

import gc
import os
import sys
import time

from gate import fastjson as json  # json.loads and json.dumps without the json package (gate/fastjson.py)

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from gate.gates.base import HookContext, Outcome
    from gate.session.ledger import Ledger

MAX_STDIN_BYTES = 64 * 1024 * 1024

# event -> its module in gate/gates/events/, whose ENTRY function answers it
HANDLERS: dict[str, str] = {
    "UserPromptSubmit": "gate.gates.events.user_prompt_submit",  # recall, then the write-back reminder
    "Stop": "gate.gates.events.stop",
    "SessionStart": "gate.gates.events.session_start",
    "PreCompact": "gate.gates.events.pre_compact",
    "PreToolUse": "gate.gates.events.pre_tool_use",
    "SubagentStop": "gate.gates.events.subagent_stop",
    "SubagentStart": "gate.gates.events.subagent_start",  # a spawn's held memories (Codex)
}
ENTRY = "handle"
# Answers that an event may give; anything else is dropped (a bug must not block a prompt or a compaction).
ALLOWED_OUTPUT: dict[str, Callable[[dict[str, Any]], bool]] = {
    "UserPromptSubmit": lambda out: set(out) == {"hookSpecificOutput"},
    "SessionStart": lambda out: set(out) == {"hookSpecificOutput"},
    "PreToolUse": lambda out: set(out) == {"hookSpecificOutput"}
    and "permissionDecision" not in out["hookSpecificOutput"],
    "Stop": lambda out: set(out) <= {"decision", "reason"},
    "PreCompact": lambda out: False,
    "SubagentStop": lambda out: False,  # a subagent's Stop never blocks and never answers
    "SubagentStart": lambda out: set(out) == {"hookSpecificOutput"}
    and set(out["hookSpecificOutput"]) == {"hookEventName", "additionalContext"},
}


# The agents besides Claude Code, and the host module that reads and writes their hook I/O.
HOSTS: dict[str, str] = {"codex": "gate.hosts.codex.hook_io", "gemini": "gate.hosts.gemini.hook_io"}


def agent_of(argv: list[str]) -> str | None:
    """The agent named on the hook's command line (`--agent NAME`), None for Claude Code; raises for one gate
    does not serve (a wrong command must not answer in the wrong schema)."""
    if "--agent" not in argv:
        return None
    at = argv.index("--agent")
    name = argv[at + 1] if at + 1 < len(argv) else ""
    if name == "claude-code":
        return None
    if name not in HOSTS:
        raise ValueError(f"gate's hook serves no agent {name!r}")
    return name


def _host(agent: str | None) -> Any:
    if agent is None:
        return None
    __import__(HOSTS[agent])
    return sys.modules[HOSTS[agent]]


# The one gate that may refuse a tool call, and the one answer it may give (gate/gates/recall/search_first.py).
REFUSING_GATES: dict[str, str] = {"PreToolUse": "agent_search"}


def _refusal(out: dict[str, Any]) -> bool:
    """A deny with a one-line reason, and nothing else: never an allow, an ask or a changed input."""
    specific = out.get("hookSpecificOutput")
    if set(out) != {"hookSpecificOutput"} or not isinstance(specific, dict):
        return False
    reason = specific.get("permissionDecisionReason")
    return (
        set(specific) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
        and specific["hookEventName"] == "PreToolUse"
        and specific["permissionDecision"] == "deny"
        and isinstance(reason, str)
        and bool(reason.strip())
        and "\n" not in reason
    )


def _load_handler(event_name: str) -> Callable[..., Any] | None:
    """The gate for an event, imported only for that event (plain imports: importlib costs ~1 ms)."""
    module_name = HANDLERS.get(event_name)
    if module_name is None:
        return None
    __import__(module_name)
    return getattr(sys.modules[module_name], ENTRY)


def decide(ctx: HookContext, ledger: Ledger) -> Outcome:
    """The gate's answer to one event: the hooks and `gate replay` both decide here, nothing else does."""
    handler = _load_handler(ctx.event_name)
    if handler is None:
        raise ValueError(f"no gate answers {ctx.event_name}")
    outcome = handler(ctx, ledger)
    output = outcome.output
    refusing = REFUSING_GATES.get(ctx.event_name)
    refusal = refusing is not None and outcome.gate == refusing and output is not None and _refusal(output)
    if output is not None and not refusal and not ALLOWED_OUTPUT.get(ctx.event_name, lambda _: False)(output):
        raise ValueError(f"{ctx.event_name} may not answer with {sorted(output)}")
    return outcome


def run(event: Any, started: float, agent: str | None = None) -> str | None:
    """Evaluate one parsed event (from `agent`; None: Claude Code); return the text for stdout (or None).
    Raises on any failure."""
    from gate.gates.base import HookContext
    from gate.paths import ProjectPaths
    from gate.session.audit import write_audit
    from gate.session.ledger import open_ledger
    from gate.settings import load_settings

    if not isinstance(event, dict):
        raise ValueError("the event is not a JSON object")
    if not isinstance(event.get("hook_event_name"), str):
        raise ValueError("the event has no hook_event_name")
    host = _host(agent)
    if host is not None:
        event = host.read_event(event)  # gate's terms, the event's name too
    event_name = event.get("hook_event_name")
    if not isinstance(event_name, str) or event_name not in HANDLERS:
        return None
    session_id = event.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        session_id = os.environ.get("CLAUDE_CODE_SESSION_ID") or "no-session"
    cwd = event.get("cwd")
    if not isinstance(cwd, str) or not cwd or not os.path.isdir(cwd):
        cwd = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    paths = ProjectPaths.for_cwd(cwd)
    problems: list[str] = []
    settings = load_settings(paths.root, problems=problems)
    if host is not None and hasattr(host, "settings_for"):
        settings = {**settings, **host.settings_for(event)}  # what the agent cannot be given at this event
    if problems or paths.migration_error:  # a bad setting falls back to its default; the gates go on, the log says why
        from gate.session.audit import write_error

        for problem in problems:
            write_error(event_name, ValueError(problem), project=paths.root, kind="setting", project_id=paths.key)
        if paths.migration_error is not None:  # the old stores stay where they are until a call moves them
            write_error(event_name, paths.migration_error, project=paths.root, kind="migration",
                        project_id=paths.key)
    ctx = HookContext(event=event, event_name=event_name, session_id=session_id, paths=paths, settings=settings)
    with open_ledger(session_id) as ledger:
        outcome = _continuation(host, ctx, ledger) or decide(ctx, ledger)
    ctx.finish()
    output = outcome.output
    if host is not None:
        output = host.write_verdict(event_name, output, event)
    elif event_name == "Stop" and output is not None:
        output = claude_code_stop(output, outcome.extra.get("cli_version"), ctx.rules("writeback"))
    # ASCII JSON (non-ASCII as \u escapes): writable whatever the locale's stdout encoding, and a lone
    # surrogate read from a transcript cannot make the write fail after the gate has decided.
    text = json.dumps(output) if output is not None else None
    if settings.get("audit", True):
        record: dict[str, Any] = {
            "session": session_id,
            "project": paths.root,  # the checkout, for reading; reports select by the id
            "project_id": paths.key,  # the project (every checkout of its repository): resolved above, no new read
            "event": event_name,
            "gate": outcome.gate,
            "decision": outcome.decision,
            "reason": outcome.reason,
            "delivered": outcome.delivered,
            "suppressed": outcome.suppressed,
            "dropped": outcome.dropped,
            "chars": outcome.chars,
            "latency_ms": round((time.perf_counter() - started) * 1000, 2),
        }
        transcript = event.get("transcript_path")
        record["transcript"] = transcript[:500] if isinstance(transcript, str) else ""  # for stats: use
        if agent is not None:
            record["agent"] = agent
        if os.environ.get("GATE_DOCTOR"):
            record["synthetic"] = True
        record.update(outcome.extra)
        write_audit(record, int(settings.get("audit_max_bytes", 20_000_000)), sources=_free_text(event))
    return text


def claude_code_stop(output: dict[str, Any], version: str | None, rules: dict[str, Any]) -> dict[str, Any]:
    """The write-back gate's block as the Claude Code that runs the hook takes it from a Stop hook (`version`: the
    one its transcript names). From rules/writeback.toml [claude_code] stop_context_since on: the reason as the
    Stop's `additionalContext`, which continues the turn as a block does (the next Stop has stop_hook_active, the
    CLI's cap of consecutive blocks holds) and reaches the model once, as "Stop hook additional context: <reason>".
    `{"decision":"block"}` reaches it twice (measured on 2.1.332): "Stop hook feedback: <reason>", then "Stop hook
    blocking error from command: "<the hook's command>": <reason>"; exit 2 once, but with the command in front.
    Older versions, or no version known: `decision: block`, the one form every version continues the turn on (an
    older CLI drops a Stop's hookSpecificOutput as a validation error the model never sees: the gate would never
    block)."""
    reason = output.get("reason")
    if output.get("decision") != "block" or not isinstance(reason, str):
        return output
    section = rules.get("claude_code")
    since = section.get("stop_context_since") if isinstance(section, dict) else None
    ours, first = version_key(version), version_key(since)
    if ours is None or first is None or ours < first:
        return output
    return {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": reason}}


def version_key(text: object) -> tuple[int, ...] | None:
    """"2.1.163" -> (2, 1, 163); the digits that lead each of the first three parts ("2.2.0-beta" -> (2, 2, 0));
    None when a part has none, or for anything but a string. (No regex: a Stop hook with its patterns kept
    loads no `re`, tests/test_hot_path.py.)"""
    if not isinstance(text, str):
        return None
    key: list[int] = []
    for part in text.strip().split(".")[:3]:
        digits = ""
        for char in part:
            if char not in "0123456789":
                break
            digits += char
        if not digits:
            return None
        key.append(int(digits))
    return tuple(key) if len(key) == 3 else None


def _continuation(host: Any, ctx: HookContext, ledger: Ledger) -> Outcome | None:
    """An agent that answers a block with a new prompt (the block's reason, Gemini's AfterAgent) and a new end: while
    the block waits for its outcome, that prompt is gate's own (no recall on it: in Claude Code the reason is no
    prompt), and the end that follows is the block's follow-up whatever the agent says (stop_hook_active: a tool
    call in between starts Gemini's loop again without it)."""
    if host is None or not getattr(host, "CONTINUES_AFTER_BLOCK", False) or not ledger.writeback_pending:
        return None
    if ctx.event_name == "Stop":
        ctx.event["stop_hook_active"] = True
        return None
    if ctx.event_name == "UserPromptSubmit":
        from gate.gates.base import Outcome

        return Outcome("skipped", "SKIP_BLOCK_CONTINUATION", gate="recall")
    return None


def _free_text(event: dict[str, Any]) -> list[str]:
    """What the user or the agent typed into this event: where a pasted secret would come from."""
    texts = [event.get("prompt"), event.get("last_assistant_message")]
    tool_input = event.get("tool_input")
    if isinstance(tool_input, dict):
        texts += list(tool_input.values())
    return [text for text in texts if isinstance(text, str)]


def main() -> int:
    started = time.perf_counter()
    event_name = "unknown"
    session = ""
    cwd = ""
    try:
        agent = agent_of(sys.argv[1:])
        raw = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
        if len(raw) > MAX_STDIN_BYTES:
            raise ValueError("the event is larger than gate reads")
        try:
            event = json.loads(raw)
        except UnicodeDecodeError:  # stray bytes that are not UTF-8: each one becomes U+FFFD, as `gate replay`
            event = json.loads(raw.decode("utf-8", errors="replace"))  # reads a transcript, and the event goes on
        if isinstance(event, dict) and (b"\\ud" in raw or b"\\uD" in raw or b"\xed" in raw):
            from gate.session.transcript import without_surrogates  # rare: only when one may be there

            event = without_surrogates(event)
        if isinstance(event, dict):
            if isinstance(event.get("hook_event_name"), str):
                event_name = event["hook_event_name"][:40]
            if isinstance(event.get("session_id"), str):
                session = event["session_id"][:200]
            if isinstance(event.get("cwd"), str):
                cwd = event["cwd"][:1000]
        text = run(event, started, agent)
    except BaseException as error:  # fail open: whatever happened, the session goes on
        _fail_open(event_name, session, cwd, error, started)
        return 0
    if text is not None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BaseException:
            return 0
    return 0


def entry() -> None:
    """The hook process (what the launcher runs): main(), then out at once.

    The garbage collector is off for the process's short life: its allocations are mostly imports and a
    few thousand short-lived objects, and a collection pass over the imported modules costs ~2 ms. The exit
    skips interpreter shutdown (module teardown, finalizers: ~4 ms) with os._exit, once everything the hook
    owes is out: its answer on stdout (flushed here), the audit line and any error line (written with
    os.write before main() returns). Nothing else is buffered: the ledger and index writes are closed,
    committed files, and a detached background build is a process of its own. Newly compiled regex programs
    are kept for the next hook here (gate/literals.py).
    """
    gc.disable()
    code = 0
    try:
        code = main()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # a closed stdout: the answer is lost either way, and the exit stays 0
        pass
    try:  # the regex programs this process compiled, kept for the next hook
        literals = sys.modules.get("gate.literals")
        if literals is not None:
            literals.save_new_programs()
    except BaseException:
        pass
    os._exit(code)


def _fail_open(event_name: str, session: str, cwd: str, error: BaseException, started: float) -> None:
    try:
        from gate.session.audit import write_audit, write_error

        project = project_id = ""
        if cwd:
            try:
                from gate.paths import project_root

                project = str(project_root(cwd))
            except Exception:
                project = ""
        if project:
            try:  # the project's id, read (or made) as the hook would have: the failure may lie there itself
                from gate.project_id import identify

                project_id = identify(project).key
            except Exception:
                project_id = ""

        write_error(event_name, error, project=project, project_id=project_id or None)
        write_audit(
            {
                "session": session,
                "project": project,
                **({"project_id": project_id} if project_id else {}),
                "event": event_name,
                "gate": "",
                "decision": "failed_open",
                "reason": "FAILED_OPEN",
                "error": type(error).__name__,
                "latency_ms": round((time.perf_counter() - started) * 1000, 2),
                **({"synthetic": True} if os.environ.get("GATE_DOCTOR") else {}),
            }
        )
    except BaseException:
        pass


if __name__ == "__main__":
    entry()
