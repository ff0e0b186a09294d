"""`gate stats`: a scripted sequence of hook events through the real entry point (`python -m gate.hook`, one
process per event, as Claude Code runs it), then exact counts from `gate stats --json`.

The sequence (project P unless said otherwise), with what each step must produce:

session A
  1 SessionStart startup            session_start FIRED_SESSION_START        delivers m-ruff
  2 prompt: waterfall trigger       recall FIRED_SESSION_START               delivers m-waterfall
    agent runs `gate show m-waterfall` and cites it                          (opened, cited)
  3 Stop                            ALLOW_NO_SIGNAL
  4 prompt: "thanks"                SKIP_TRIVIAL_PROMPT
  5 prompt: invoice rounding        FIRED_TOPIC_SHIFT                        delivers m-round-new
  6 Stop (a decision)               BLOCKED_WRITEBACK                        block 1
  7 Stop after the block            ALLOW_STOP_ACTIVE, outcome stored        `--link relates:m-round-new` (acted on)
  8 prompt: same topic              SKIP_NO_SHIFT
  9 Stop, turn ran `gate remember`  ALLOW_ALREADY_STORED                     voluntary store
 10 PreCompact                      MARKED_COMPACTION
 11 SessionStart compact            session_start FIRED_AFTER_COMPACTION     delivers m-ruff
 12 prompt: waterfall again         recall FIRED_AFTER_COMPACTION            delivers m-waterfall
 13 Stop (a fix)                    BLOCKED_WRITEBACK                        block 2
 14 Stop after the block            ALLOW_STOP_ACTIVE, outcome ignored
session B
 15 SessionStart startup            FIRED_SESSION_START                      delivers m-ruff
 16 prompt: waterfall trigger       recall FIRED_SESSION_START               delivers m-waterfall (never used)
 17 Stop (a measurement)            BLOCKED_WRITEBACK
 18 Stop after the block            ALLOW_STOP_ACTIVE, outcome acknowledged
 19 SessionStart clear              FIRED_SESSION_START                      delivers m-ruff
 20 prompt: waterfall trigger       SUPPRESSED_ALREADY_DELIVERED             suppresses m-waterfall
 21 Stop                            ALLOW_NO_SIGNAL
elsewhere
 22 session C in project Q          SessionStart + one prompt: other project, left out unless --all-projects
 23 a `gate doctor` event           synthetic: never counted
 24 a malformed event               FAILED_OPEN (one line in the error log)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import Transcript

REPO = Path(__file__).resolve().parents[1]


class LiveTranscript(Transcript):
    """Transcript lines stamped with the real clock: delivery → use compares them with the audit's times."""

    def _stamp(self) -> str:
        now = time.time()
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


class Sandbox:
    """A project, a HOME (for ~/.claude transcripts) and a GATE_HOME, all in a temp dir."""

    def __init__(self, base: Path, name: str = "proj") -> None:
        self.base = base
        self.project = base / name
        (self.project / ".git").mkdir(parents=True)
        self.home = base / "home"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("GATE_", "CLAUDE_"))},
            "GATE_HOME": str(base / "gate-home"),
            "HOME": str(self.home),
            "PYTHONPATH": str(REPO),
        }
        self.transcripts: dict[str, LiveTranscript] = {}

    def gate(self, *args: str, stdin: str | None = None, cwd: Path | None = None, check: bool = True) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "gate.cli", *args],
            env=self.env,
            cwd=cwd or self.project,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if check:
            assert result.returncode == 0, result.stderr
        return result.stdout if check else result.stdout + result.stderr

    def gate_json(self, *args: str) -> dict[str, Any]:
        return json.loads(self.gate(*args, "--json"))

    def transcript(self, session: str, project: Path | None = None) -> LiveTranscript:
        if session not in self.transcripts:
            self.transcripts[session] = LiveTranscript(session=session, cwd=str(project or self.project))
        return self.transcripts[session]

    def transcript_path(self, session: str, project: Path | None = None) -> Path:
        # Claude Code's layout: ~/.claude/projects/<cwd with / and . as ->/<session>.jsonl
        slug = str(project or self.project).replace("/", "-").replace(".", "-")
        return self.home / ".claude" / "projects" / slug / f"{session}.jsonl"

    def hook(self, event: str, session: str, project: Path | None = None, extra_env: dict[str, str] | None = None,
             **fields: Any) -> dict[str, Any] | None:
        project = project or self.project
        path = self.transcript_path(session, project)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.transcript(session, project).text(), encoding="utf-8")
        payload = {
            "hook_event_name": event,
            "session_id": session,
            "cwd": str(project),
            "transcript_path": str(path),
            **fields,
        }
        return self.raw_hook(json.dumps(payload), extra_env)

    def raw_hook(self, stdin: str, extra_env: dict[str, str] | None = None) -> dict[str, Any] | None:
        result = subprocess.run(
            [sys.executable, "-m", "gate.hook"],
            env={**self.env, **(extra_env or {})},
            cwd=self.project,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout) if result.stdout.strip() else None

    def audit(self) -> list[dict[str, Any]]:
        path = Path(self.env["GATE_HOME"]) / "state" / "audit.jsonl"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def prompt(self, session: str, text: str, project: Path | None = None) -> dict[str, Any] | None:
        self.transcript(session, project).prompt(text)
        return self.hook("UserPromptSubmit", session, project, prompt=text)

    def stop(self, session: str, active: bool = False, project: Path | None = None) -> dict[str, Any] | None:
        return self.hook("Stop", session, project, stop_hook_active=active)


def seed(box: Sandbox) -> None:
    """The memories both test files search: a live one, a superseded pair, a directive, another project's."""
    box.gate("remember", "Waterfall reserve account trigger fires after 30 days of arrears",
             "--id", "m-waterfall", "--kind", "finding")
    box.gate("remember", "Invoice totals round with banker's rounding", "--id", "m-round-old", "--kind", "decision")
    box.gate("remember", "Invoice totals round half-up since the ledger v2 migration", "--id", "m-round-new",
             "--kind", "decision", "--supersedes", "m-round-old")
    box.gate("remember", "Run ruff before every commit", "--id", "m-ruff", "--kind", "directive")
    # A private memory of another project sitting in this project's private store: search must reject it.
    other = {"id": "m-elsewhere", "kind": "finding", "project": "/elsewhere/other",
             "title": "Invoice totals rounding differs in the legacy exporter"}
    box.gate("import", "-", "--keep-project", stdin=json.dumps(other) + "\n")  # without it: this project's


WATERFALL = "How does the waterfall reserve account trigger work?"
ROUNDING = "How are invoice totals rounded in the billing exporter?"


def run_sequence(box: Sandbox) -> None:
    a = box.transcript("sess-a")
    box.hook("SessionStart", "sess-a", source="startup")  # 1
    box.prompt("sess-a", WATERFALL)  # 2
    a.tool("Bash", {"command": "gate show m-waterfall"}, "m-waterfall · finding · …")
    a.say("Per m-waterfall the trigger fires after thirty days of arrears.")
    box.stop("sess-a")  # 3
    box.prompt("sess-a", "thanks")  # 4
    a.say("You're welcome.")
    box.prompt("sess-a", ROUNDING)  # 5
    a.say("We decided to keep half-up rounding because the ledger expects it.")
    box.stop("sess-a")  # 6
    a.hook_feedback("MEMORY CHECK: this turn made a decision.")
    a.tool("Bash", {"command": 'gate remember "Invoice totals keep half-up rounding" --kind decision '
                               "--link relates:m-round-new"}, "m-keep01")
    a.say("Stored.")
    box.stop("sess-a", active=True)  # 7
    box.prompt("sess-a", "Which rounding mode do the invoice totals use for refunds?")  # 8
    a.tool("Bash", {"command": 'gate remember "Refund totals use the same rounding as invoices"'}, "m-refund1")
    a.say("Refunds use the same rounding as invoices.")
    box.stop("sess-a")  # 9
    box.hook("PreCompact", "sess-a", trigger="auto")  # 10
    box.hook("SessionStart", "sess-a", source="compact")  # 11
    box.prompt("sess-a", "Explain the waterfall reserve account trigger again")  # 12
    a.say("The root cause was a missing arrears check in the trigger; the trigger test passes now.")
    box.stop("sess-a")  # 13
    a.hook_feedback("MEMORY CHECK: this turn made a fix.")
    a.say("Done.")
    box.stop("sess-a", active=True)  # 14

    b = box.transcript("sess-b")
    box.hook("SessionStart", "sess-b", source="startup")  # 15
    box.prompt("sess-b", WATERFALL)  # 16
    b.say("I measured the trigger check: it takes 30 ms per account.")
    box.stop("sess-b")  # 17
    b.hook_feedback("MEMORY CHECK: this turn made a finding.")
    b.say("That is already stored in memory.")
    box.stop("sess-b", active=True)  # 18
    box.hook("SessionStart", "sess-b", source="clear")  # 19
    box.prompt("sess-b", WATERFALL)  # 20
    b.say("Same answer as before.")
    box.stop("sess-b")  # 21

    other = box.base / "other-proj"
    (other / ".git").mkdir(parents=True)
    box.hook("SessionStart", "sess-c", project=other, source="startup")  # 22
    box.prompt("sess-c", "How is the deployment pipeline configured?", project=other)
    box.hook("UserPromptSubmit", "doctor-check", prompt=WATERFALL, extra_env={"GATE_DOCTOR": "1"})  # 23
    box.raw_hook("this is not JSON")  # 24


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Sandbox:
    sandbox = Sandbox(tmp_path_factory.mktemp("stats"))
    seed(sandbox)
    run_sequence(sandbox)
    return sandbox


def test_the_sequence_produced_the_expected_evaluations(box: Sandbox) -> None:
    # Guards the premise of the counts below: if a gate's behaviour changes, this says which step moved.
    reasons = [(r["session"], r["event"], r["reason"]) for r in box.audit()]
    assert reasons == [
        ("sess-a", "SessionStart", "FIRED_SESSION_START"),
        ("sess-a", "UserPromptSubmit", "FIRED_SESSION_START"),
        ("sess-a", "Stop", "ALLOW_NO_SIGNAL"),
        ("sess-a", "UserPromptSubmit", "SKIP_TRIVIAL_PROMPT"),
        ("sess-a", "UserPromptSubmit", "FIRED_TOPIC_SHIFT"),
        ("sess-a", "Stop", "BLOCKED_WRITEBACK"),
        ("sess-a", "Stop", "ALLOW_STOP_ACTIVE"),
        ("sess-a", "UserPromptSubmit", "SKIP_NO_SHIFT"),
        ("sess-a", "Stop", "ALLOW_ALREADY_STORED"),
        ("sess-a", "PreCompact", "MARKED_COMPACTION"),
        ("sess-a", "SessionStart", "FIRED_AFTER_COMPACTION"),
        ("sess-a", "UserPromptSubmit", "FIRED_AFTER_COMPACTION"),
        ("sess-a", "Stop", "BLOCKED_WRITEBACK"),
        ("sess-a", "Stop", "ALLOW_STOP_ACTIVE"),
        ("sess-b", "SessionStart", "FIRED_SESSION_START"),
        ("sess-b", "UserPromptSubmit", "FIRED_SESSION_START"),
        ("sess-b", "Stop", "BLOCKED_WRITEBACK"),
        ("sess-b", "Stop", "ALLOW_STOP_ACTIVE"),
        ("sess-b", "SessionStart", "FIRED_SESSION_START"),
        ("sess-b", "UserPromptSubmit", "SUPPRESSED_ALREADY_DELIVERED"),
        ("sess-b", "Stop", "ALLOW_NO_SIGNAL"),
        ("sess-c", "SessionStart", "SKIP_NOTHING_STANDING"),
        ("sess-c", "UserPromptSubmit", "SKIP_NO_HITS"),
        ("doctor-check", "UserPromptSubmit", "FIRED_SESSION_START"),
        ("", "unknown", "FAILED_OPEN"),
    ]


def _pick(actual: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: actual.get(key) for key in keys}


def test_stats_json_counts_for_this_project(box: Sandbox) -> None:
    report = box.gate_json("stats")
    assert report["empty"] is False
    assert report["sessions"] == 2  # the doctor's session and the other project's are not here
    assert report["evaluations"] == 21
    recall = report["injection"]["gates"]["recall"]
    keys = ("prompts", "fires", "delivered", "distinct_delivered", "suppressed", "dropped_over_budget")
    assert _pick(recall, *keys) == {
        "prompts": 7, "fires": 4, "delivered": 4, "distinct_delivered": 2, "suppressed": 1,
        "dropped_over_budget": 0,
    }
    assert recall["fires_by_reason"] == {"FIRED_SESSION_START": 2, "FIRED_TOPIC_SHIFT": 1, "FIRED_AFTER_COMPACTION": 1}
    assert recall["skips_by_reason"] == {
        "SKIP_TRIVIAL_PROMPT": 1, "SKIP_NO_SHIFT": 1, "SUPPRESSED_ALREADY_DELIVERED": 1,
    }
    start = report["injection"]["gates"]["session_start"]
    assert start["fires_by_reason"] == {"FIRED_SESSION_START": 3, "FIRED_AFTER_COMPACTION": 1}
    assert (start["delivered"], start["distinct_delivered"]) == (4, 1)
    totals = report["injection"]["totals"]
    assert (totals["fires"], totals["delivered"], totals["distinct_delivered"]) == (8, 8, 3)
    audit = [r for r in box.audit() if r.get("project") == str(box.project) and not r.get("synthetic")]
    chars = sum(r["chars"] for r in audit if r["decision"] == "fired")
    assert totals["chars"] == chars and totals["tokens"] == chars // 4
    assert totals["chars_per_session"] == round(chars / 2)
    # delivery → use, per (session, memory): A got m-ruff, m-waterfall (opened and cited), m-round-new (acted
    # on: linked from the stored decision); B got m-ruff and m-waterfall and used neither.
    keys = ("delivered", "examined", "opened", "cited", "acted_on", "used", "transcripts_found")
    assert _pick(report["use"], *keys) == {
        "delivered": 5, "examined": 5, "opened": 1, "cited": 1, "acted_on": 1, "used": 2, "transcripts_found": 2,
    }
    assert report["use"]["never_used_ids"] == ["m-ruff"]
    by_gate = {gate: (g["examined"], g["used"]) for gate, g in report["use"]["by_gate"].items()}
    assert by_gate == {"session_start": (2, 0), "recall": (3, 2)}
    writeback = report["writeback"]
    assert _pick(writeback, "stops", "turns", "consequential_turns", "blocks") == {
        "stops": 9, "turns": 6, "consequential_turns": 4, "blocks": 3,
    }
    assert writeback["outcomes"] == {"stored": 1, "acknowledged": 1, "ignored": 1, "pending": 0}
    assert writeback["voluntary"] == {"stored": 1, "acknowledged": 0}
    assert writeback["evidence_by_kind"] == {"decision": 1, "fix": 1, "learning": 1}
    assert (writeback["capped_turns"], writeback["sessions_at_cap"]) == (0, 0)
    assert report["adoption"] == {
        "consequential_turns": 4, "with_store_decision": 3, "share": 0.75,
        "gated": 2, "gated_share": 0.5, "voluntary": 1, "voluntary_share": 0.25,
        "stored": 2, "stored_share": 0.5, "sessions": 2,
        "memory_ops_per_session": {"gated": 0.5, "voluntary": 0.5},
    }
    health = report["health"]
    assert {event: v["n"] for event, v in health["latency_ms"].items()} == {
        "PreCompact": 1, "SessionStart": 4, "Stop": 9, "UserPromptSubmit": 7, "unknown": 1,
    }
    assert health["failed_open"] == 1
    assert health["last_error"]["error"] == "JSONDecodeError"
    assert health["store"] == {
        "active": 4, "by_kind": {"finding": 2, "decision": 1, "directive": 1}, "by_scope": {"private": 4},
        "by_status": {"active": 4, "superseded": 1}, "corrupt": 0,
    }


def test_stats_for_one_session(box: Sandbox) -> None:
    report = box.gate_json("stats", "--session", "sess-b")
    assert report["sessions"] == 1
    recall = report["injection"]["gates"]["recall"]
    assert (recall["prompts"], recall["fires"], recall["suppressed"]) == (2, 1, 1)
    assert report["writeback"]["outcomes"] == {"stored": 0, "acknowledged": 1, "ignored": 0, "pending": 0}
    assert report["adoption"]["share"] == 1.0
    assert (report["use"]["examined"], report["use"]["used"]) == (2, 0)


def test_stats_all_projects_and_since(box: Sandbox) -> None:
    report = box.gate_json("stats", "--all-projects")
    assert report["sessions"] == 3
    assert report["injection"]["gates"]["recall"]["prompts"] == 8
    assert report["injection"]["gates"]["recall"]["skips_by_reason"]["SKIP_NO_HITS"] == 1
    assert report["injection"]["gates"]["session_start"]["skips_by_reason"] == {"SKIP_NOTHING_STANDING": 1}
    assert box.gate_json("stats", "--since", "1d")["evaluations"] == 21
    later = box.gate_json("stats", "--since", "2999-01-01")
    assert later["empty"] is True and later["evaluations"] == 0
    assert "--all-projects" in later["hint"] or "--since" in later["hint"]


# What "reads in ten seconds" holds the text to: one screen, lines a terminal shows whole, words not codes.
SCREEN_LINES = 30  # a laptop terminal
LINE_CHARS = 200
RAW_CODE = r"\b[A-Z]+(?:_[A-Z]+)+\b"  # FIRED_TOPIC_SHIFT and the like: the JSON says those, the text says words


def assert_reads_at_a_glance(text: str) -> None:
    import re

    lines = text.splitlines()
    assert len(lines) <= SCREEN_LINES, f"{len(lines)} lines: more than a screen"
    too_wide = [line for line in lines if len(line) > LINE_CHARS]
    assert not too_wide, too_wide
    assert not re.findall(RAW_CODE, text), re.findall(RAW_CODE, text)
    # the three questions in the order a user asks them: delivered? used? written? then whether it is healthy
    heads = [next(n for n, line in enumerate(lines) if line.startswith(head))
             for head in ("gate stats — ", "Recall gate:", "Write-back gate:", "Adoption:", "Health:")]
    assert heads == sorted(heads) and heads[0] == 0


def test_stats_text_reads_in_ten_seconds(box: Sandbox) -> None:
    text = box.gate("stats")
    assert_reads_at_a_glance(text)
    assert "Recall gate: 7 prompts → 4 fired (57%): session start 2 · topic shift 1 · after compaction 1" in text
    assert "then used: 2/5 (40%) session deliveries — opened 1 · cited 1 · acted on 1 · restated 1" in text
    assert "by gate: session start 0/2 (0%) · recall 2/3 (67%)" in text
    assert "blocked 3 → stored 1 · acknowledged 1 · ignored 1" in text
    assert "stored without being asked: 1" in text
    assert "Adoption: 3/4 (75%) consequential turns ended with a store decision — gated 2, voluntary 1" in text
    assert "fail-opens: 1 — last error" in text and "JSONDecodeError" in text


def test_stats_text_stays_a_screen_however_much_there_is(box: Sandbox) -> None:
    """The text does not grow with the log: many memories never used, every event's latency, an error with a
    long message, reasons of every kind — still one screen of short lines."""
    from gate.stats.report import _REASON_WORDS, render_text

    report = box.gate_json("stats")
    report["use"]["never_used_ids"] = [f"m-{n:06x}" for n in range(20)]
    events = ("UserPromptSubmit", "Stop", "SessionStart", "PreCompact", "PreToolUse", "unknown")
    report["health"]["latency_ms"] = {event: {"p50": 123.45, "p95": 987.65} for event in events}
    report["health"]["last_error"] = {"ts": "2026-12-01T10:00:00Z", "event": "UserPromptSubmit",
                                      "error": "ValueError", "message": "x" * 300}
    recall = report["injection"]["gates"]["recall"]
    recall["fires_by_reason"] = {code: 3 for code in _REASON_WORDS if code.startswith("FIRED_")}
    recall["skips_by_reason"] = {code: 2 for code in _REASON_WORDS if code.startswith(("SKIP_", "SUPPRESSED_"))}
    assert_reads_at_a_glance(render_text(report))


def test_empty_log_says_no_activity_and_how_to_check(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    text = box.gate("stats")
    assert "no activity yet" in text and "gate doctor" in text
    report = box.gate_json("stats")
    assert report["empty"] is True and report["evaluations"] == 0 and "gate doctor" in report["hint"]
    assert report["writeback"]["blocks"] == 0 and report["adoption"]["share"] is None


def test_bad_since_is_a_user_error(tmp_path: Path) -> None:
    out = Sandbox(tmp_path).gate("stats", "--since", "last tuesday", check=False)
    assert "cannot read --since 'last tuesday'" in out and "hint: write a span such as 7d" in out


# ---------------------------------------------------------------------------------------------------------------
# the pieces, without processes


def test_parse_since() -> None:
    from gate.errors import GateError
    from gate.stats.select import parse_since

    now = 1_700_000_000.0  # 2023-11-14T22:13:20Z
    assert parse_since("7d", now) == "2023-11-07T22:13:20Z"
    assert parse_since("12h", now) == "2023-11-14T10:13:20Z"
    assert parse_since("2025-11-01") == "2025-11-01T00:00:00Z"
    assert parse_since("2025-11-01T08:30") == "2025-11-01T08:30:00Z"
    with pytest.raises(GateError):
        parse_since("2025-13-45")


def _stop(session: str, reason: str, **extra: Any) -> dict[str, Any]:
    return {"session": session, "event": "Stop", "gate": "writeback", "reason": reason, **extra}


def test_writeback_cap_and_pending_outcomes() -> None:
    from gate.stats.writeback import writeback_figures

    records = [
        _stop("s", "BLOCKED_WRITEBACK", evidence=["fix"], blocks=1),
        _stop("s", "ALLOW_STOP_ACTIVE", outcome="stored", outcome_of="previous_block"),
        _stop("s", "BLOCKED_WRITEBACK", evidence=["decision"], blocks=2),  # the session ended before a Stop
        _stop("t", "ALLOW_CAPPED", evidence=["gotcha"]),
        # a settling Stop that found the store: the blocked turn going on, not a voluntary store
        _stop("u", "ALLOW_ALREADY_STORED", outcome="stored", outcome_of="previous_block", store_decision="stored"),
    ]
    figures = writeback_figures(records, cap=2)
    assert figures["outcomes"] == {"stored": 2, "acknowledged": 0, "ignored": 0, "pending": 0}
    assert figures["voluntary"] == {"stored": 0, "acknowledged": 0}
    assert (figures["capped_turns"], figures["sessions_at_cap"], figures["consequential_turns"]) == (1, 2, 3)


def _assistant(ts: str, *blocks: dict[str, Any]) -> str:
    return json.dumps({"type": "assistant", "timestamp": ts, "message": {"role": "assistant", "content": list(blocks)}})


def test_use_counts_only_what_came_after_the_delivery_and_reads_only_the_tail(tmp_path: Path) -> None:
    from gate.stats.usage import session_uses

    path = tmp_path / "s.jsonl"
    lines = [
        _assistant("2025-11-01T10:00:00.000Z", {"type": "text", "text": "m-early was cited before delivery"}),
        json.dumps({"type": "attachment", "content": "delivered: m-early m-late"}),  # injected context: not use
        _assistant("2025-11-01T10:05:00.500Z", {"type": "tool_use", "id": "t1", "name": "Bash",
                                                "input": {"command": "/opt/bin/gate show m-early"}}),
        _assistant("2025-11-01T10:06:00.000Z", {"type": "tool_use", "id": "t2", "name": "Read",
                                                "input": {"file_path": "/data/memories/m-late.toml"}}),
        _assistant("2025-11-01T10:07:00.000Z", {"type": "text", "text": "per m-late (not m-later)"}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    delivered = {"m-early": "2025-11-01T10:05:00Z", "m-late": "2025-11-01T10:05:00Z"}
    result = session_uses(path, delivered)
    assert result.uses == {"m-early": {"opened"}, "m-late": {"opened", "cited"}}
    assert result.partial is False
    tail = session_uses(path, delivered, max_bytes=len(lines[-1]) + 10)
    assert tail.uses == {"m-late": {"cited"}} and tail.partial is True


def test_a_reply_that_restates_a_delivered_memory_counts_as_its_use(tmp_path: Path) -> None:
    """Issue 44: `gate stats` said "then used: 0/30" while the replies restated what was delivered: an agent that
    applies a fact seldom quotes its id. A reply holding enough of the memory's title terms is a use; one that
    only shares a word or two with it is not."""
    box = Sandbox(tmp_path)
    box.gate("remember", "Invoice totals round half-even with the decimal quantize call", "--id", "m-halfeven",
             "--kind", "decision")
    box.gate("remember", "Waterfall reserve account trigger fires after 30 days of arrears", "--id", "m-waterfall",
             "--kind", "finding")
    t = box.transcript("sess-r")
    box.prompt("sess-r", "How are invoice totals rounded in the billing exporter?")
    t.say("The invoice totals are rounded half-even: the exporter calls decimal quantize on each total.")
    box.stop("sess-r")
    box.prompt("sess-r", "When does the waterfall reserve account trigger fire?")
    t.say("Let me look at the waterfall code first.")
    box.stop("sess-r")
    delivered = {m for r in box.audit() for m in r.get("delivered", [])}
    assert {"m-halfeven", "m-waterfall"} <= delivered  # the premise: both were delivered at a prompt
    use = box.gate_json("stats")["use"]
    assert use["examined"] == 2 and use["used"] == 1 and use.get("restated") == 1, use
    assert use["never_used_ids"] == ["m-waterfall"], use
    assert "restated 1" in box.gate("stats")


def test_html_page_is_self_contained(box: Sandbox) -> None:
    page = box.base / "stats.html"
    box.gate("stats", "--html", str(page))
    text = page.read_text(encoding="utf-8")
    assert text.count("<svg") == 2 and "<script" not in text and "http" not in text.replace("http://www.w3", "")
    assert "75%" in text  # the adoption share, as in the text report


def test_the_last_error_shown_is_this_projects(tmp_path: Path) -> None:
    """The error log is shared by every project: another project's failure (or doctor's own synthetic run) is not
    this project's last error; a line from before gate named projects still is."""
    from gate.stats.health import last_error

    log = tmp_path / "errors.jsonl"

    def write(*records: dict[str, Any]) -> None:
        log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    mine = {"ts": "2026-12-01T09:00:00Z", "event": "Stop", "error": "OSError", "message": "mine", "project": "/p/a"}
    theirs = {"ts": "2026-12-01T10:00:00Z", "event": "Stop", "error": "ValueError", "message": "theirs",
              "project": "/p/b"}
    synthetic = {**mine, "message": "doctor's run", "synthetic": True}
    write(mine, theirs, synthetic)
    assert last_error(log, project="/p/a")["message"] == "mine"
    assert last_error(log, project="/p/b")["message"] == "theirs"
    assert last_error(log)["message"] == "theirs"  # every project: the last real line
    unnamed = {"ts": "2026-12-01T11:00:00Z", "event": "Stop", "error": "KeyError", "message": "old line"}
    write(mine, theirs, unnamed)
    assert last_error(log, project="/p/a")["message"] == "old line"


def test_html_says_where_the_page_went(box: Sandbox) -> None:
    """Issue 44: `gate stats --html F` wrote F and did not say where; the absolute path is printed (on stderr,
    so --json keeps stdout JSON only)."""
    result = subprocess.run([sys.executable, "-m", "gate.cli", "stats", "--html", "page.html", "--json"],
                            env=box.env, cwd=box.project, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    written = (box.project / "page.html").resolve()
    assert written.is_file()
    assert f"gate: wrote the page to {written}" in result.stderr
    json.loads(result.stdout)  # the report alone


def test_stats_says_which_agent_was_given_what(tmp_path: Path) -> None:
    """Issue 45: one project's memory reaches Claude Code and Codex CLI; `gate stats` says per agent what its
    sessions were delivered and how often each was held. A record without `agent` is Claude Code's (the hooks
    wrote none before other agents came)."""
    home = tmp_path / "gate-home"
    (home / "state").mkdir(parents=True)
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    root = str(project.resolve())
    base = {"ts": "2026-12-01T09:00:00Z", "project": root}
    records = [
        {**base, "session": "c1", "event": "UserPromptSubmit", "gate": "recall", "decision": "fired",
         "reason": "FIRED_TOPIC_SHIFT", "delivered": ["m-1", "m-2"]},
        {**base, "session": "c1", "event": "Stop", "gate": "writeback", "decision": "block",
         "reason": "BLOCKED_WRITEBACK"},
        {**base, "session": "x1", "event": "UserPromptSubmit", "gate": "recall", "decision": "fired",
         "reason": "FIRED_TOPIC_SHIFT", "delivered": ["m-3"], "agent": "codex"},
        {**base, "session": "x2", "event": "UserPromptSubmit", "gate": "recall", "decision": "skip",
         "reason": "REMINDED_WRITEBACK", "agent": "codex"},
    ]
    (home / "state" / "audit.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    env = {**os.environ, "GATE_HOME": str(home), "HOME": str(tmp_path)}
    run = subprocess.run([sys.executable, "-m", "gate.cli", "stats", "--json"], env=env, cwd=project,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    agents = json.loads(run.stdout)["agents"]
    assert agents == {
        "claude-code": {"sessions": 1, "evaluations": 2, "delivered": 2, "blocks": 1, "reminders": 0, "written": 0},
        "codex": {"sessions": 2, "evaluations": 2, "delivered": 1, "blocks": 0, "reminders": 1, "written": 0},
    }
    text = subprocess.run([sys.executable, "-m", "gate.cli", "stats"], env=env, cwd=project,
                          capture_output=True, text=True, timeout=60).stdout
    assert ("Agents: claude-code 1 session, 2 memories delivered, 0 memories written, 1 block, 0 reminders; "
            "codex 2 sessions, 1 memory delivered, 0 memories written, 0 blocks, 1 reminder") in text
