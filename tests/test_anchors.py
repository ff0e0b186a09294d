"""Cue-anchored delivery through the real entry points: memories written with the installed `gate remember`,
hook events fed to `python -m gate.hook` in a fresh process, the audit log read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gate.paths import audit_log_file

GATE_BIN = Path(sys.executable).parent / "gate"


def remember(project: Path, title: str, *args: str) -> str:
    proc = subprocess.run(
        [str(GATE_BIN), "remember", title, *args, "--project", str(project)],
        capture_output=True, text=True, timeout=60, env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def gate_cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GATE_BIN), *args, "--project", str(project)], capture_output=True, text=True, timeout=60,
        env=dict(os.environ),
    )


def hook(project: Path, name: str, session: str, env: dict[str, str] | None = None, **fields: Any) -> str | None:
    """Run one event; the additionalContext it answered with, or None. Checks the protocol on the way."""
    event = {"session_id": session, "transcript_path": str(project / "none.jsonl"), "cwd": str(project),
             "hook_event_name": name, **fields}
    proc = subprocess.run(
        [sys.executable, "-m", "gate.hook"], input=json.dumps(event).encode(), capture_output=True, timeout=60,
        env={**os.environ, **(env or {})}, cwd=project,
    )
    assert proc.returncode == 0
    if not proc.stdout:
        return None
    answer = json.loads(proc.stdout)
    assert set(answer) == {"hookSpecificOutput"}
    assert "permissionDecision" not in answer["hookSpecificOutput"]  # a cue never denies the tool
    assert answer["hookSpecificOutput"]["hookEventName"] == name
    return answer["hookSpecificOutput"]["additionalContext"]


def read(project: Path, session: str, path: str, tool: str = "Read", key: str = "file_path") -> str | None:
    return hook(project, "PreToolUse", session, tool_name=tool, tool_input={key: str(project / path)})


def bash(project: Path, session: str, command: str) -> str | None:
    return hook(project, "PreToolUse", session, tool_name="Bash", tool_input={"command": command, "description": ""})


def compact(project: Path, session: str) -> None:
    hook(project, "PreCompact", session, trigger="manual", custom_instructions="")
    hook(project, "SessionStart", session, source="compact")


def last_audit(event: str = "PreToolUse") -> dict[str, Any]:
    records = [json.loads(line) for line in Path(audit_log_file()).read_text().splitlines()]
    return [r for r in records if r.get("event") == event][-1]


@pytest.fixture
def payments(project: Path) -> Path:
    (project / "src" / "payments").mkdir(parents=True)
    (project / "src" / "payments" / "ledger.py").write_text("ROUNDING = 'half-even'\n")
    (project / "src" / "payments" / "refunds.py").write_text("pass\n")
    (project / "src" / "api").mkdir(parents=True)
    (project / "src" / "api" / "views.py").write_text("pass\n")
    return project


def test_gotcha_fires_on_first_touch_not_second_and_again_after_compaction(payments: Path) -> None:
    gotcha = remember(payments, "Ledger amounts use banker's rounding", "--kind", "gotcha",
                      "--path", "src/payments/**", "--body", "Decimal.quantize with ROUND_HALF_EVEN")
    first = read(payments, "s1", "src/payments/ledger.py")
    assert first is not None
    assert gotcha in first and "banker's rounding" in first and "ROUND_HALF_EVEN" in first
    assert "src/payments/ledger.py" in first
    assert "claim" in first  # agent-written: framed as a claim to verify
    record = last_audit()
    assert (record["gate"], record["reason"], record["delivered"]) == ("anchors", "FIRED_PATH", [gotcha])
    assert record["fired"] == {gotcha: "path:src/payments/**"}

    assert read(payments, "s1", "src/payments/ledger.py") is None
    assert last_audit()["reason"] == "SUPPRESSED_ALREADY_DELIVERED"
    assert read(payments, "s1", "src/payments/refunds.py", tool="Edit") is None  # once per window, not per file
    assert read(payments, "s1", "src/api/views.py") is None
    assert last_audit()["reason"] == "SKIP_NO_CUE"

    compact(payments, "s1")
    again = read(payments, "s1", "src/payments/ledger.py")
    assert again is not None and gotcha in again


def test_every_file_tool_input_is_a_cue_and_broad_searches_are_not(payments: Path) -> None:
    gotcha = remember(payments, "Refunds post a reversing ledger entry", "--kind", "gotcha",
                      "--path", "src/payments/**")
    firing = [
        ("Write", "file_path", "src/payments/new.py"),
        ("MultiEdit", "file_path", "src/payments/ledger.py"),
        ("NotebookEdit", "notebook_path", "src/payments/analysis.ipynb"),
        ("Grep", "path", "src/payments"),
        ("Glob", "pattern", "src/payments/*.py"),
    ]
    for number, (tool, key, path) in enumerate(firing):
        out = read(payments, f"fire-{number}", path, tool=tool, key=key)
        assert out is not None and gotcha in out, (tool, key, path)
    relative = hook(payments, "PreToolUse", "fire-rel", tool_name="Read",
                    tool_input={"file_path": "src/payments/ledger.py"})  # relative to the session cwd
    assert relative is not None and gotcha in relative
    silent = [
        ("Grep", "path", "src"),  # a search of a parent directory is no cue for everything below it
        ("Grep", "path", "."),
        ("Glob", "pattern", "**/*.py"),
        ("Read", "file_path", "src/paymentsx/a.py"),
        ("Read", "file_path", "src/payments.py"),
    ]
    for number, (tool, key, path) in enumerate(silent):
        assert read(payments, f"quiet-{number}", path, tool=tool, key=key) is None, (tool, key, path)
    outside = hook(payments, "PreToolUse", "quiet-outside", tool_name="Read",
                   tool_input={"file_path": "/etc/src/payments/ledger.py"})
    assert outside is None
    assert hook(payments, "PreToolUse", "quiet-tool", tool_name="WebFetch", tool_input={"url": "x"}) is None
    assert last_audit()["reason"] == "SKIP_NOT_A_CUE"


def test_command_trigger_fires_before_a_matching_bash_call(payments: Path) -> None:
    memory = remember(payments, "Run alembic upgrade with --sql against prod first", "--kind", "gotcha",
                      "--on", r"command:alembic\s+(upgrade|downgrade)")
    edit_cue = remember(payments, "The API views are generated; edit the templates", "--kind", "gotcha",
                        "--on", "path:src/api/**,event:pre-edit")
    assert bash(payments, "c1", "ls -la && git status") is None
    assert last_audit()["reason"] == "SKIP_NO_CUE"
    out = bash(payments, "c1", "cd db && alembic upgrade head")
    assert out is not None and memory in out and "alembic upgrade head" in out
    assert (last_audit()["reason"], last_audit()["delivered"]) == ("FIRED_COMMAND", [memory])
    assert "command" not in json.dumps(last_audit().get("target", ""))  # the command itself is not audited
    assert bash(payments, "c1", "alembic downgrade -1") is None  # once per window
    # path + event:pre-edit: reading the file is no cue, editing it is
    assert read(payments, "c1", "src/api/views.py") is None
    out = read(payments, "c1", "src/api/views.py", tool="Edit")
    assert out is not None and edit_cue in out


@pytest.mark.parametrize(
    ("spec", "command", "fires"),
    [
        (r"command:(?i)drop\s+table", "psql -c 'DROP TABLE users'", True),
        (r"command:(?i)drop\s+table", "psql -c 'Drop Table users'", True),
        (r"command:(?i)drop\s+table", "psql -c 'drop table users'", True),
        (r"command:(?i)DROP\s+TABLE", "psql -c 'drop table users'", True),  # the literal it needs is folded too
        (r"command:(?i)drop\s+table", "psql -c 'select 1 from tables'", False),
        (r"command:DROP\s+TABLE", "psql -c 'drop table users'", False),  # no (?i): case counts
        (r"command:DROP\s+TABLE", "psql -c 'DROP TABLE users'", True),
    ],
)
def test_case_insensitive_command_trigger_fires_whatever_the_case(
    payments: Path, spec: str, command: str, fires: bool
) -> None:
    """The hook checks a literal each regex needs before running it: under (?i) that check must fold case
    the way the regex does, or the trigger silently stops firing."""
    memory = remember(payments, "Take a snapshot before dropping any table", "--kind", "gotcha", "--on", spec)
    out = bash(payments, "ci1", command)
    record = last_audit()
    if fires:
        assert out is not None and memory in out, record["reason"]
        assert (record["reason"], record["delivered"]) == ("FIRED_COMMAND", [memory])
    else:
        assert out is None
        assert record["reason"] == "SKIP_NO_CUE"


def test_expired_never_fires_and_not_before_delays(payments: Path) -> None:
    expired = remember(payments, "Payments freeze during the quarter close", "--kind", "gotcha",
                       "--on", "path:src/payments/**,expires:2020-01-01")
    later = remember(payments, "The new ledger schema ships next century", "--kind", "gotcha",
                     "--on", "path:src/payments/**,not-before:2999-01-01")
    assert read(payments, "t1", "src/payments/ledger.py") is None
    record = last_audit()
    assert record["reason"] == "SKIP_OUTSIDE_WINDOW"
    assert record["outside_window"] == {expired: "expired", later: "not_yet"}
    # nor does the recall gate's search bring them back
    prompt = hook(payments, "UserPromptSubmit", "t1", prompt="Why is there a payments freeze during the quarter close?")
    assert prompt is None or (expired not in prompt and later not in prompt)
    recall = last_audit("UserPromptSubmit")
    assert expired not in recall["suppressed"]  # not "already delivered": withheld, and the trace says why
    assert {"id": expired, "disposition": "OUTSIDE_WINDOW"}.items() <= next(
        c for c in recall["trace"]["candidates"] if c["id"] == expired
    ).items()


def test_cooldown_spaces_deliveries_across_compaction_windows(payments: Path) -> None:
    memory = remember(payments, "Refund totals are cached for an hour", "--kind", "gotcha",
                      "--on", "path:src/payments/refunds.py,cooldown:1h")
    assert read(payments, "k1", "src/payments/refunds.py") is not None
    compact(payments, "k1")
    assert read(payments, "k1", "src/payments/refunds.py") is None
    record = last_audit()
    assert (record["reason"], record["suppressed"], record["cooldown"]) == ("SUPPRESSED_COOLDOWN", [memory], [memory])


def test_budget_drops_lowest_precedence_and_the_audit_names_them(payments: Path) -> None:
    ids = {
        kind: remember(payments, f"Ledger note of kind {kind} about posting order", "--kind", kind,
                       "--on", "path:src/payments/**", "--body", "x" * 300)
        for kind in ("finding", "decision", "gotcha", "directive", "task")
    }
    rules = payments / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "triggers.toml").write_text("[budget]\nmax_items = 3\n")
    out = read(payments, "b1", "src/payments/ledger.py")
    assert out is not None
    record = last_audit()
    assert record["delivered"] == [ids["directive"], ids["gotcha"], ids["task"]]
    assert record["dropped"] == [ids["decision"], ids["finding"]]
    assert ids["finding"] not in out and ids["decision"] not in out
    # a character budget cuts by the same order
    (rules / "triggers.toml").write_text("[budget]\nmax_items = 10\n")
    out = hook(
        payments, "PreToolUse", "b2", env={"GATE_ANCHOR_BUDGET_TOKENS": "300"}, tool_name="Read",
        tool_input={"file_path": str(payments / "src/payments/ledger.py")},
    )
    assert out is not None and len(out) <= 1200
    record = last_audit()
    assert record["delivered"] and record["dropped"]
    order = [ids[k] for k in ("directive", "gotcha", "task", "decision", "finding")]
    assert record["delivered"] + record["dropped"] == order
    # past the session budget, cues stay silent and say what they held back
    (rules / "triggers.toml").write_text("[budget]\nsession_tokens = 10\n")
    assert read(payments, "b2", "src/api/views.py") is None
    compact(payments, "b2")
    assert read(payments, "b2", "src/payments/ledger.py") is None
    record = last_audit()
    assert (record["reason"], record["dropped"]) == ("DROPPED_SESSION_BUDGET", order)


def test_mute_silences_the_gates_and_unmute_restores_them(payments: Path) -> None:
    memory = remember(payments, "Ledger writes go through the outbox", "--kind", "gotcha", "--path", "src/payments/**")
    remember(payments, "Always run the payments suite before pushing", "--kind", "directive")
    assert gate_cli(payments, "mute").returncode == 0
    assert read(payments, "m1", "src/payments/ledger.py") is None
    assert (last_audit()["reason"], last_audit()["muted"]) == ("SKIP_MUTED", "project")
    assert hook(payments, "SessionStart", "m1", source="startup") is None
    assert last_audit("SessionStart")["reason"] == "SKIP_MUTED"
    status = json.loads(gate_cli(payments, "mute", "--status", "--json").stdout)
    assert status["project_muted"] is True
    assert gate_cli(payments, "unmute").returncode == 0
    out = read(payments, "m1", "src/payments/ledger.py")
    assert out is not None and memory in out
    # one session only
    assert gate_cli(payments, "mute", "--session", "m2").returncode == 0
    assert read(payments, "m2", "src/payments/ledger.py") is None
    assert (last_audit()["reason"], last_audit()["muted"]) == ("SKIP_MUTED", "session")
    assert read(payments, "m3", "src/payments/ledger.py") is not None
    records = [json.loads(line) for line in Path(audit_log_file()).read_text().splitlines()]
    assert [r["reason"] for r in records if r.get("gate") == "mute"] == [
        "MUTED_PROJECT", "UNMUTED_PROJECT", "MUTED_SESSION"
    ]


def test_keyword_and_event_cues_and_kind_defaults(payments: Path) -> None:
    keyword = remember(payments, "Sandbox credentials live in the vault under staging", "--kind", "finding",
                       "--on", "keyword:invoice export")
    start = remember(payments, "Deploys are frozen on Fridays", "--kind", "decision", "--on", "event:session-start")
    directive = remember(payments, "Write tests before fixing bugs", "--kind", "directive", "--human")
    anchored_directive = remember(payments, "Never hand-edit generated views", "--kind", "directive",
                                  "--on", "path:src/api/**")
    task = remember(payments, "Finish the refunds migration", "--kind", "task")
    opening = hook(payments, "SessionStart", "e1", source="startup")
    assert opening is not None
    assert directive in opening and start in opening and task in opening
    assert anchored_directive not in opening  # it declared its own cue
    # precedence: directive > task > decision (a cued decision comes after the open tasks)
    assert opening.index(directive) < opening.index(task) < opening.index(start)
    # a keyword-cued memory is not delivered at session start: at most one line of the index (issue 21), which
    # leaves its full delivery to its cue
    started = last_audit("SessionStart")
    assert keyword not in started["delivered"] and keyword in started["indexed"]
    out = hook(payments, "UserPromptSubmit", "e1", prompt="The invoices export job keeps failing overnight")
    assert out is not None and keyword in out
    record = last_audit("UserPromptSubmit")
    assert keyword in record["delivered"]
    again = hook(payments, "UserPromptSubmit", "e1", prompt="And the invoice export retries, how many are there?")
    assert again is None or keyword not in again  # once per window
    out = read(payments, "e1", "src/api/views.py")
    assert out is not None and anchored_directive in out
    compact(payments, "e1")
    after = [json.loads(line) for line in Path(audit_log_file()).read_text().splitlines()][-1]
    assert after["reason"] == "FIRED_AFTER_COMPACTION"
    assert directive in after["delivered"] and start not in after["delivered"]  # session-start only


def test_invalid_triggers_are_refused_at_write_time(payments: Path) -> None:
    for spec, message in [
        ("path:/etc/passwd", "absolute"),
        ("path:../other/**", "leaves the project"),
        ("command:alembic (", "regular expression"),
        ("event:lunch", "unknown event"),
        ("path:src/**,command:make", "never hold at the same moment"),
        ("expires:2027-13-01", "date"),
        ("cooldown:soon", "duration"),
        ("src/**", "every clause is NAME:VALUE"),
    ]:
        proc = gate_cli(payments, "remember", "A note", "--on", spec)
        assert proc.returncode == 2 and message in proc.stderr, (spec, proc.stderr)
        assert "hint:" in proc.stderr
        value = spec.partition(":")[2].split(",")[0]
        assert not value or value not in proc.stderr  # clause names only: a value may be a secret


@pytest.mark.parametrize("kind", ["decision", "reference", "finding", "fix", "task", "preference", "directive"])
def test_every_kind_stored_with_a_path_shows_on_first_touch(payments: Path, kind: str) -> None:
    """The README: a memory tied to a file (`--path`) shows when the agent first reads or edits it. It held for
    gotchas only (rules/triggers.toml gave the path cue to them alone): a decision or a reference with --path
    never showed at the file."""
    memory = remember(payments, f"Refund amounts are computed in cents (a {kind} about refunds.py)", "--kind", kind,
                      "--path", "src/payments/refunds.py")
    out = read(payments, f"touch-{kind}", "src/payments/refunds.py", tool="Edit")
    assert out is not None and memory in out, kind
    record = last_audit()
    assert (record["reason"], record["delivered"]) == ("FIRED_PATH", [memory])
    assert read(payments, f"touch-{kind}", "src/api/views.py") is None  # another file: no cue


def test_a_directive_with_a_path_shown_at_session_start_is_not_shown_again_at_the_file(payments: Path) -> None:
    directive = remember(payments, "Refunds are never issued without a ticket number", "--kind", "directive",
                         "--path", "src/payments/refunds.py")
    opening = hook(payments, "SessionStart", "d1", source="startup")
    assert opening is not None and directive in opening  # its kind's session-start cue still holds
    assert read(payments, "d1", "src/payments/refunds.py") is None  # once per window, whichever gate delivered it


def test_remember_says_when_a_path_will_not_show_the_memory(payments: Path) -> None:
    """Where a project's rules give a kind no path cue, `gate remember --path` says so at write time, and nothing
    is said where the path shows it (every kind, by the shipped rules)."""
    stored = gate_cli(payments, "remember", "Refunds round half-even like the ledger", "--kind", "decision",
                      "--path", "src/payments/refunds.py")
    assert stored.returncode == 0 and "path cue" not in stored.stderr, stored.stderr
    rules = payments / ".gate" / "rules"
    rules.mkdir(parents=True)
    (rules / "triggers.toml").write_text('[defaults]\ndecision = []\n')
    stored = gate_cli(payments, "remember", "Refund reasons come from the support tool", "--kind", "decision",
                      "--path", "src/payments/refunds.py")
    assert stored.returncode == 0, stored.stderr
    note = stored.stderr
    assert "will not show when the agent touches src/payments/refunds.py" in note, note
    assert "--on 'path:src/payments/refunds.py'" in note
    out = read(payments, "n1", "src/payments/refunds.py")
    assert out is None or stored.stdout.strip() not in out  # what the note says
