"""`gate replay` (issue 13): the timeline of a recorded session, replay through the hooks' own code, live state
untouched, --compare, --labels, and the corpus of real sessions (skipped where ../shared/corpora is absent)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import report

from gate.paths import ProjectPaths
from gate.replay.timeline import read_timeline

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpora" / "sessions"
SESSION = "5e551011-aaaa-bbbb-cccc-000000000001"

Gate = Callable[..., tuple[int, str, str]]


# --- a transcript, written the way Claude Code writes one -----------------------------------------------------


class Transcript:
    def __init__(self, cwd: str = "/srv/app") -> None:
        self.lines: list[bytes] = []
        self.cwd = cwd
        self.clock = 0

    def _stamp(self) -> str:
        self.clock += 1
        return f"2026-05-01T10:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z"

    def add(self, entry: dict[str, Any]) -> int:
        entry = {"sessionId": SESSION, "cwd": self.cwd, "timestamp": self._stamp(), "isSidechain": False, **entry}
        self.lines.append(json.dumps(entry).encode())
        return len(self.lines)

    def raw(self, data: bytes) -> int:
        self.lines.append(data)
        return len(self.lines)

    def prompt(self, text: str) -> int:
        return self.add({"type": "user", "message": {"role": "user", "content": text}})

    def say(self, text: str) -> int:
        content = [{"type": "text", "text": text}]
        return self.add({"type": "assistant", "message": {"role": "assistant", "content": content}})

    def tool(self, name: str, tool_input: dict[str, Any], output: str, is_error: bool = False) -> int:
        self.clock += 1
        use_id = f"toolu_{self.clock:04d}"
        line = self.add({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": use_id, "name": name, "input": tool_input}]}})
        self.add({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use_id, "content": output, "is_error": is_error}]}})
        return line

    def meta(self, text: str) -> int:
        return self.add({"type": "user", "isMeta": True, "message": {"role": "user", "content": text}})

    def write(self, path: Path) -> Path:
        path.write_bytes(b"\n".join(self.lines) + b"\n")
        return path


FIX_REPLY = "Fixed. The root cause was an off-by-one in the reserve trigger, so I changed >= to > in trigger.py."
DECISION_REPLY = "We decided to keep the ledger in SQLite rather than Postgres because the CLI must run offline."


def _session(tmp_path: Path, block_as_context: bool = False) -> tuple[Path, dict[str, int]]:
    t = Transcript()
    at: dict[str, int] = {}
    at["p1"] = t.prompt("How does the payment waterfall fill the reserve account when the trigger fires?")
    t.say("The waterfall pays the reserve account first, then the noteholders.")
    at["p2"] = t.prompt("The reserve trigger test fails on the last day of the month, please fix it.")
    t.tool("Bash", {"command": "pytest tests/test_trigger.py"}, "1 failed", is_error=True)
    t.tool("Edit", {"file_path": "/srv/app/trigger.py", "old_string": ">=", "new_string": ">"}, "ok")
    t.tool("Bash", {"command": "pytest tests/test_trigger.py"}, "3 passed")
    at["s2"] = t.say(FIX_REPLY)
    if block_as_context:  # how Claude Code keeps today's block: the Stop's additionalContext, an attachment line
        t.add({"type": "attachment", "attachment": {"type": "hook_additional_context", "hookEvent": "Stop",
               "hookName": "Stop", "content": ["MEMORY CHECK: this turn made a fix and stored nothing."]}})
    else:
        t.meta("Stop hook feedback:\nMEMORY CHECK: this turn made a fix and stored nothing.")
    at["s2b"] = t.say("Nothing here worth storing beyond the code itself.")
    at["p3"] = t.prompt("Where should the ledger live: SQLite or Postgres? Pick one, it must work offline.")
    t.tool("Edit", {"file_path": "/srv/app/settings.py", "old_string": "postgres", "new_string": "sqlite"}, "ok")
    at["s3"] = t.say(DECISION_REPLY)
    return t.write(tmp_path / f"{SESSION}.jsonl"), at


# --- the timeline ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("block_as_context", [False, True], ids=["feedback", "stop_context"])
def test_timeline_has_the_hook_events_in_order(tmp_path: Path, block_as_context: bool) -> None:
    """A Stop hook's block is read in either form Claude Code keeps it: the "Stop hook feedback:" line of a
    `decision: block`, or the attachment of a Stop's additionalContext (gate's, gate.hook.claude_code_stop)."""
    path, at = _session(tmp_path, block_as_context)
    timeline = read_timeline(str(path))
    events = [(s.name, s.line, s.turn) for s in timeline.steps]
    assert events == [
        ("SessionStart", 1, 0),
        ("UserPromptSubmit", at["p1"], at["p1"]),
        ("Stop", at["p1"] + 1, at["p1"]),
        ("UserPromptSubmit", at["p2"], at["p2"]),
        ("PreToolUse", at["p2"] + 1, at["p2"]),
        ("PreToolUse", at["p2"] + 3, at["p2"]),
        ("PreToolUse", at["p2"] + 5, at["p2"]),
        ("Stop", at["s2"], at["p2"]),
        ("Stop", at["s2b"], at["p2"]),
        ("UserPromptSubmit", at["p3"], at["p3"]),
        ("PreToolUse", at["p3"] + 1, at["p3"]),
        ("Stop", at["s3"], at["p3"]),
    ]
    stops = timeline.stops()
    assert [s.event["stop_hook_active"] for s in stops] == [False, False, True, False]
    assert stops[1].event["last_assistant_message"] == FIX_REPLY
    prompt = timeline.prompts()[0]
    # UserPromptSubmit runs before its prompt is written; Stop after the last block is.
    data = path.read_bytes()
    assert data[: prompt.end].count(b"\n") == at["p1"] - 1
    assert data[: stops[0].end].count(b"\n") == at["p1"] + 1


def test_timeline_knows_commands_interruptions_compaction_and_bad_lines(tmp_path: Path) -> None:
    t = Transcript()
    t.raw(b'{"type":"summary","summary":"an earlier session","leafUuid":"x"}')
    first = t.prompt("Plot the monthly revenue as a stacked bar chart.")
    t.say("Here is the chart code.")
    t.prompt("<command-name>/clear</command-name>\n<command-args></command-args>")
    t.add({"type": "system", "subtype": "local_command", "content": "cleared"})
    review = t.prompt("<command-name>/triage</command-name>\n<command-args>42</command-args>")
    t.say("The change looks right; one nit in the exporter.")
    interrupted = t.prompt("Now rewrite the exporter in Rust.")
    stopped = [{"type": "text", "text": "[Request interrupted by user]"}]
    t.add({"type": "user", "message": {"role": "user", "content": stopped}})
    long_turn = t.prompt("Then migrate the ledger tables to the new schema.")
    t.say("Starting with the accounts table.")
    boundary = t.add({"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto"}})
    t.add({"type": "user", "isCompactSummary": True, "message": {"role": "user", "content": "Summary: migrating…"}})
    t.add({"type": "assistant", "isSidechain": True, "message": {"role": "assistant", "content": "subagent text"}})
    t.raw(b'[1, 2, 3]')
    t.raw('{"type":"progress","data":"caf\xe9"}'.encode("latin-1"))  # not UTF-8
    surrogate = t.raw(json.dumps({"type": "assistant", "sessionId": SESSION, "message": {"role": "assistant",
                      "content": [{"type": "text", "text": "broken \ud83d emoji, migration done."}]}}).encode())
    t.raw(b'{"type":"assistant","message":{"role":"assi')  # cut short
    timeline = read_timeline(str(t.write(tmp_path / "s.jsonl")))

    events = [(s.name, s.line) for s in timeline.steps]
    assert ("UserPromptSubmit", first) in events
    assert [s.line for s in timeline.prompts()] == [first, interrupted, long_turn]  # commands fire no prompt hook
    # /triage (a custom command) made the model work: a Stop; /clear printed only; the interrupted turn never ended.
    assert [s.turn for s in timeline.stops()] == [first, review, long_turn]
    assert ("PreCompact", boundary) in events and ("SessionStart", boundary) in events
    compact = [s for s in timeline.steps if s.name == "SessionStart" and s.event["source"] == "compact"]
    assert len(compact) == 1
    last = timeline.stops()[-1]
    assert last.line == surrogate and "\ufffd" in last.event["last_assistant_message"]
    assert timeline.skipped == {"sidechain": 1, "not_an_object": 1, "not_json": 1}
    assert timeline.repaired == {"invalid_utf8": 1, "lone_surrogate": 1}


# --- the replay through the CLI -------------------------------------------------------------------------------


def _snapshot(root: Path) -> dict[str, tuple[bytes, int] | None]:
    """Every file (bytes and mtime) and directory under root: a file written, replaced, added or removed, or a
    directory made, changes it."""
    out: dict[str, tuple[bytes, int] | None] = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if path.is_file():
            out[name] = (path.read_bytes(), path.stat().st_mtime_ns)
        elif path.is_dir():
            out[name + "/"] = None
    return out


def _live(home: Path) -> dict[str, dict[str, tuple[bytes, int] | None]]:
    """The user's live state: ledgers, audit and logs (state), the store (data), the index, cue table and rule
    snapshots (cache)."""
    return {part: _snapshot(home / part) for part in ("state", "data", "cache")}


def _changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if k not in before or k not in after
                  or before[k] != after[k])


def test_replay_reports_and_never_touches_live_state(
    tmp_path: Path, gate: Gate, isolated_home: Path, hook: Callable[..., tuple[str, int]], project: Path
) -> None:
    code, out, _ = gate("remember", "Waterfall payments fill the reserve account before noteholders", "--kind",
                        "decision", "--json")
    assert code == 0
    memory_id = json.loads(out)["id"]
    # The store written a minute ago: a directory changed in the last moments would be looked at again by the
    # next catch-up, which may rewrite the index's manifests (legitimately) and blur what the replay wrote.
    private_store = Path(ProjectPaths.for_cwd(project).private_store)
    written = time.time_ns() - 60 * 1_000_000_000
    os.utime(private_store, ns=(written, written))
    path, at = _session(tmp_path)
    for fields in ({"hook_event_name": "UserPromptSubmit", "prompt": "anything at all about ledgers"},
                   {"hook_event_name": "Stop", "stop_hook_active": False}):
        # the live hooks of this session: they bring the index, cue table and rule snapshots level
        hook({**fields, "session_id": SESSION, "cwd": str(project), "transcript_path": str(path)})
    gate("mute")  # a live project mute: the replay evaluates the policy, not today's mute
    before = _live(isolated_home)
    assert any(name.startswith("sessions/") for name in before["state"]) and "audit.jsonl" in before["state"]
    assert any(name.startswith("index/") and name.endswith("meta.json") for name in before["cache"])

    code, out, err = gate("replay", str(path), "--json", "--steps")
    assert code == 0, err
    result = json.loads(out)
    [session] = result["sessions"]
    assert (session["prompts"], session["fires"], session["turns_ended"], session["blocks"]) == (3, 1, 4, 2)
    assert session["fired"][0]["delivered"] == [memory_id] and session["fired"][0]["line"] == at["p1"]
    assert [b["turn"] for b in session["blocked"]] == [at["p2"], at["p3"]]
    assert session["blocked"][0]["evidence"] == ["fix"] and session["blocked"][1]["evidence"] == ["decision"]
    assert result["total"]["skipped"] == {}
    for part, files in _live(isolated_home).items():  # the ledgers, audit, logs and mute; the memories; the index
        assert not _changed(before[part], files), f"replay wrote the live {part}: {_changed(before[part], files)}"
    code, text, _ = gate("replay", str(path))
    assert code == 0
    for part, files in _live(isolated_home).items():
        assert not _changed(before[part], files), f"replay wrote the live {part}: {_changed(before[part], files)}"
    assert f"fire  line {at['p1']}: {memory_id}" in text
    assert "total: 1 session, 3 prompts, 1 fire, 1 memory delivered, 4 turns ended, 2 blocks" in text


def test_compare_lists_exactly_the_turns_whose_verdict_changed(tmp_path: Path, gate: Gate) -> None:
    path, at = _session(tmp_path)
    _, out, _ = gate("replay", str(path), "--json", "--steps")
    scores = {s["turn"]: s["score"] for s in json.loads(out)["sessions"][0]["steps"] if "score" in s}
    # The fix turn (phrase, tool evidence, an edit) scores well above the decision turn (phrase, an edit).
    assert scores[at["p2"]] > 1.5 > scores[at["p3"]] >= 1.0
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "writeback.toml").write_text("[score]\nthreshold = 1.5\n")  # a stricter write-back threshold
    code, out, err = gate("replay", str(path), "--compare", str(rules), "--json")
    assert code == 0, err
    changes = json.loads(out)["changes"]
    assert [(c["change"], c["turn"], c["line"]) for c in changes] == [("block removed", at["p3"], at["s3"])]
    assert changes[0]["reply"].startswith("We decided to keep the ledger in SQLite")

    code, text, _ = gate("replay", str(path), "--compare", str(rules))
    assert code == 0
    assert text.splitlines()[0].endswith("1 changes (1 block removed)")
    # Under the stricter threshold the decision turn still reaches the reminder's: deferred to the next prompt.
    assert "block removed" in text and f":{at['s3']} (BLOCKED_WRITEBACK → ALLOW_DEFERRED)" in text


def test_rules_overlay_changes_the_answers(tmp_path: Path, gate: Gate) -> None:
    path, _ = _session(tmp_path)
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "writeback.toml").write_text("[decision]\npatterns = []\n")
    _, out, _ = gate("replay", str(path), "--json")
    _, overlaid, _ = gate("replay", str(path), "--json", "--rules", str(rules))
    assert json.loads(out)["total"]["blocks"] == 2 and json.loads(overlaid)["total"]["blocks"] == 1
    code, _, err = gate("replay", str(path), "--rules", str(tmp_path / "nowhere"))
    assert code == 1 and "no such directory" in err


def _labels(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_labels_score_each_gate_and_list_every_wrong_case(tmp_path: Path, gate: Gate) -> None:
    path, at = _session(tmp_path)
    name = path.name
    store = tmp_path / "store.jsonl"
    memory = {"kind": "decision", "body": "", "tags": [], "paths": [], "links": []}
    store.write_text("".join(json.dumps({**memory, **m}) + "\n" for m in [
        {"id": "m-before-01", "title": "Waterfall payments fill the reserve account before noteholders",
         "created": "2026-04-01T00:00:00Z", "updated": "2026-04-01T00:00:00Z"},
        {"id": "m-later-01", "title": "Reserve account waterfall trigger fires after three missed payments",
         "created": "2026-06-01T00:00:00Z", "updated": "2026-06-01T00:00:00Z"},
    ]))
    labels = _labels(tmp_path / "labels.jsonl", [
        {"store": "store.jsonl", "transcripts": [name]},
        {"transcript": name, "prompt": at["p1"], "shift": True, "memories": ["m-before-01"]},
        {"transcript": name, "prompt": at["p2"], "shift": False, "memories": []},
        {"transcript": name, "prompt": at["p3"], "shift": False},
        {"transcript": name, "turn": at["p1"], "block": False},
        {"transcript": name, "turn": at["p2"], "block": True, "kind": "fix"},
        {"transcript": name, "turn": at["p3"], "block": False},
    ])
    code, out, err = gate("replay", "--labels", str(labels), "--json")
    assert code == 0, err
    scores = json.loads(out)["scores"]
    shift = scores["recall_shift"]
    assert (shift["tp"], shift["fp"], shift["fn"], shift["tn"]) == (1, 1, 0, 1)
    assert [(w["line"], w["expected"]) for w in shift["wrong"]] == [(at["p3"], False)]
    delivery = scores["delivery"]
    assert (delivery["expected"], delivery["reached"], delivery["injected"], delivery["leaks"]) == (1, 1, 1, 0)
    assert delivery["recall"] == 1.0 and delivery["injected_precision"] == 1.0
    writeback = scores["writeback"]
    assert (writeback["tp"], writeback["fp"], writeback["fn"], writeback["tn"]) == (1, 1, 0, 1)
    assert [(w["turn"], w["expected"], w["evidence"]) for w in writeback["wrong"]] == [(at["p3"], False, ["decision"])]
    # As the user feels it: one false block of two ordinary turns, two blocks in three turns, no reminder.
    assert (writeback["false_block_rate"], writeback["blocks_per_100_turns"]) == (0.5, 66.7)
    assert (writeback["reminders_per_100_turns"], writeback["recall_blocked_or_reminded"]) == (0.0, 1.0)
    assert (writeback["sessions"], writeback["sessions_with_false_block"], writeback["long_sessions"]) == (1, 1, 0)
    assert scores["unmatched"] == []

    code, text, _ = gate("replay", "--labels", str(labels))
    assert code == 0
    assert "write-back gate, blocks alone: precision 0.50 recall 1.00 (n=3: tp=1 fp=1 fn=0 tn=1)" in text
    assert "recall gate, delivery: 1.00 (1 of 1 expected memories reached the agent" in text
    assert f"false block  {path}:{at['p3']}" in text


def test_labelled_store_holds_only_earlier_memories_and_counts_leaks(tmp_path: Path, gate: Gate) -> None:
    path, at = _session(tmp_path)
    store = tmp_path / "store.jsonl"
    store.write_text(json.dumps({
        "id": "m-later-01", "kind": "decision", "title": "Waterfall payments fill the reserve account first",
        "created": "2026-06-01T00:00:00Z", "updated": "2026-06-01T00:00:00Z"}) + "\n")
    labels = _labels(tmp_path / "labels.jsonl", [
        {"store": "store.jsonl", "transcripts": [path.name]},
        {"transcript": path.name, "prompt": at["p1"], "memories": []},
    ])
    code, out, _ = gate("replay", "--labels", str(labels), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["total"]["delivered"] == 0, "a memory written after the session began was delivered"
    assert data["scores"]["delivery"]["leaks"] == 0 and data["scores"]["delivery"]["leaks_measured"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: not JSON"),
        ('{"transcript": "s.jsonl", "prompt": 0, "shift": true}', "line 2: prompt must be a line number"),
        ('{"transcript": "s.jsonl", "turn": 3}', 'line 2: a turn label needs "block"'),
        ('{"transcript": "s.jsonl", "prompt": 3}', 'line 2: a prompt label needs "shift" or "memories"'),
        ('{"transcript": "s.jsonl", "turn": 3, "block": true, "kind": "hunch"}', "line 2: kind must be one of"),
        ('{"store": "x.jsonl"}', 'line 2: a store line needs "transcripts"'),
    ],
)
def test_bad_labels_are_refused_with_their_line(tmp_path: Path, gate: Gate, line: str, message: str) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"transcript": "s.jsonl", "prompt": 1, "shift": true}\n' + line + "\n")
    code, out, err = gate("replay", "--labels", str(labels))
    assert code == 2 and message in err and out == ""


def test_default_transcripts_are_the_projects_claude_code_sessions(
    tmp_path: Path, gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    code, _, err = gate("replay")
    assert code == 1 and "Claude Code has no sessions of" in err and "hint:" in err
    folder = config / "projects" / "".join(c if c.isascii() and c.isalnum() else "-" for c in str(project))
    folder.mkdir(parents=True)
    path, _ = _session(folder)
    code, out, err = gate("replay", "--json")
    assert code == 0, err
    assert [s["transcript"] for s in json.loads(out)["sessions"]] == [str(path)]


def test_an_unreadable_transcript_is_reported_not_fatal(tmp_path: Path, gate: Gate) -> None:
    """The others are replayed and the missing one reported, and the exit status says a transcript was left
    out (it was 0: `gate replay /nonexistent.jsonl` looked like a clean replay of nothing)."""
    path, _ = _session(tmp_path)
    code, out, err = gate("replay", str(path), str(tmp_path / "missing.jsonl"), "--json")
    assert code == 1
    data = json.loads(out)
    assert data["total"]["sessions"] == 1 and str(tmp_path / "missing.jsonl") in data["unreadable"]
    assert f"could not read {tmp_path / 'missing.jsonl'}" in err and "hint:" in err


def test_replay_of_a_missing_file_alone_fails(tmp_path: Path, gate: Gate) -> None:
    code, out, err = gate("replay", str(tmp_path / "nonexistent.jsonl"))
    assert code == 1 and "could not read" in err and "0 sessions" in out


# --- the corpus of real sessions ------------------------------------------------------------------------------


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpora is not beside this checkout")
def test_every_session_of_the_corpus_replays(tmp_path: Path, gate: Gate) -> None:
    """Every session of the corpus, through its mirror (scripts/corpus/mirror.py: raw transcripts linked,
    compressed ones decompressed, exports converted): Claude Code transcripts and Codex CLI rollouts alike,
    none unreadable, none failing open. All of them: about a minute on two cores."""
    out = tmp_path / "mirror"
    mirror = subprocess.run([sys.executable, str(REPO / "scripts" / "corpus" / "mirror.py"), "--out", str(out),
                             "--corpus", str(CORPUS.parent)], capture_output=True, text=True)
    assert mirror.returncode == 0, mirror.stderr
    files = sorted(str(p) for p in out.rglob("*.jsonl"))
    rollouts = [f for f in files if Path(f).read_bytes()[:200].find(b'"session_meta"') >= 0]
    assert len(files) > 1000 and len(rollouts) >= 90
    started = time.perf_counter()
    code, data_out, err = gate("replay", *files, "--json", "--quiet")
    seconds = time.perf_counter() - started
    assert code == 0, err
    data = json.loads(data_out)
    total = data["total"]
    assert total["sessions"] == len(files) and not data["unreadable"]
    assert total["agents"]["codex"] == len(rollouts)
    assert total["failed_open"] == 0
    codex = [s for s in data["sessions"] if s["agent"] == "codex"]
    assert sum(s["prompts"] for s in codex) > 500 and sum(s["turns_ended"] for s in codex) > 500
    assert total["prompts"] > 4000 and total["turns_ended"] > 4000
    report("replay of the corpus (every session)", {
        "sessions": total["sessions"], "codex rollouts": len(rollouts), "prompts": total["prompts"],
        "turns ended": total["turns_ended"], "seconds": round(seconds, 2),
        "turns/s": round(total["turns_ended"] / seconds, 1), "lines skipped": total["skipped"],
        "lines repaired": total["repaired"], "blocks": total["blocks"], "pid": os.getpid(),
    })


def test_compare_lists_a_reminder_the_next_prompt_gains(tmp_path: Path, gate: Gate) -> None:
    """A stricter threshold defers the decision turn (issue 22): --compare shows the block removed and the
    reminder the next prompt now carries, and nothing else."""
    t = Transcript()
    at = {"p1": t.prompt("Where should the ledger live: SQLite or Postgres? Pick one, it must work offline.")}
    t.tool("Edit", {"file_path": "/srv/app/settings.py", "old_string": "postgres", "new_string": "sqlite"}, "ok")
    at["s1"] = t.say(DECISION_REPLY)
    at["p2"] = t.prompt("Good. Now write the migration notes for the release.")
    t.say("Done: the notes are in docs/migrations.md.")
    path = t.write(tmp_path / f"{SESSION}.jsonl")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "writeback.toml").write_text("[score]\nthreshold = 9\n")
    code, out, err = gate("replay", str(path), "--compare", str(rules), "--json")
    assert code == 0, err
    changes = json.loads(out)["changes"]
    assert [(c["change"], c["line"]) for c in changes] == [("block removed", at["s1"]), ("reminder added", at["p2"])]
    assert changes[1]["after"]["reason"] == "REMINDED_WRITEBACK"
    code, text, _ = gate("replay", str(path), "--compare", str(rules))
    assert text.splitlines()[0].endswith("2 changes (1 block removed, 1 reminder added)")
    assert "delivered:" not in text  # a reminder changes no delivery


def _deferring_session(tmp_path: Path, session: str, cwd: str, day: int) -> tuple[Path, int]:
    """A one-turn session on `day` of May that ends with the decision turn (deferred under a threshold of 9)."""
    t = Transcript(cwd)
    turn = t.prompt("Where should the ledger live: SQLite or Postgres? Pick one, it must work offline.")
    t.tool("Edit", {"file_path": f"{cwd}/settings.py", "old_string": "postgres", "new_string": "sqlite"}, "ok")
    t.say(DECISION_REPLY)
    t.lines = [line.replace(SESSION.encode(), session.encode()).replace(b"2026-05-01", f"2026-05-{day:02d}".encode())
               for line in t.lines]
    return t.write(tmp_path / f"{session}.jsonl"), turn


def _replay_deferring_every_turn(tmp_path: Path, gate: Gate, labels: Path) -> tuple[Path, dict[str, Any]]:
    """`gate replay --labels … --json --steps` with a threshold no turn reaches: every turn with evidence defers.
    The rules overlay (for a later replay) and the parsed output."""
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "writeback.toml").write_text("[score]\nthreshold = 9\n")
    code, out, err = gate("replay", "--labels", str(labels), "--rules", str(rules), "--json", "--steps")
    assert code == 0, err
    return rules, json.loads(out)


def test_a_turn_deferred_at_a_session_s_end_reminds_the_project_s_next_session_only(
    tmp_path: Path, gate: Gate
) -> None:
    """Issue 30's carry-over, as the replay measures it: the deferred turn a session ended with is reminded of at
    the start of the next session of the same project (in the order they began, whatever order they are named
    in), never in another project's session, and counts as reminded."""
    first, turn = _deferring_session(tmp_path, "5e551011-aaaa-bbbb-cccc-00000000000a", "/srv/app", 3)
    other, other_turn = _deferring_session(tmp_path, "5e551011-aaaa-bbbb-cccc-00000000000b", "/srv/elsewhere", 4)
    later, later_turn = _deferring_session(tmp_path, "5e551011-aaaa-bbbb-cccc-00000000000c", "/srv/app", 5)
    labels = _labels(tmp_path / "labels.jsonl", [
        {"transcript": later.name, "turn": later_turn, "block": False},
        {"transcript": other.name, "turn": other_turn, "block": False},
        {"transcript": first.name, "turn": turn, "block": True, "kind": "decision"},
    ])
    rules, data = _replay_deferring_every_turn(tmp_path, gate, labels)
    starts = {Path(s["transcript"]).name: s["steps"][0]["reason"] for s in data["sessions"]}
    assert starts == {later.name: "REMINDED_CARRIED_WRITEBACK", other.name: "SKIP_NOTHING_STANDING",
                      first.name: "SKIP_NOTHING_STANDING"}, starts
    writeback = data["scores"]["writeback"]
    assert (writeback["tp"], writeback["fn"], writeback["recall_blocked_or_reminded"]) == (0, 1, 1.0), writeback
    assert writeback["reminded_at_next_session"] == 1
    # the other two end deferred too, and no later session of their project reminds of them
    assert writeback["deferred_not_reminded"] == 2, writeback
    code, text, _ = gate("replay", "--labels", str(labels), "--rules", str(rules))
    assert "1 of them at the next session's start (2 deferred turns had no reminder)" in text, text


def test_transcripts_that_share_a_session_id_are_replayed_and_scored_as_sessions_of_their_own(
    tmp_path: Path, gate: Gate
) -> None:
    """An exporter that splits one long session into several files, or an agent team whose teammates' transcripts
    carry one session id, gives the replay transcripts that share an id. Each is replayed with its own ledger, so
    each is a session of its own: the second's start reminds of the turn the first ended deferred, and only the
    first transcript's turn counts as reminded (keyed by the shared id, both did)."""
    shared = "5e551011-aaaa-bbbb-cccc-000000000010"
    first, turn = _deferring_session(tmp_path, shared, "/srv/app", 3)
    first = first.rename(tmp_path / "part-1.jsonl")
    second, second_turn = _deferring_session(tmp_path, shared, "/srv/app", 4)
    second = second.rename(tmp_path / "part-2.jsonl")
    labels = _labels(tmp_path / "labels.jsonl", [
        {"transcript": first.name, "turn": turn, "block": True, "kind": "decision"},
        {"transcript": second.name, "turn": second_turn, "block": True, "kind": "decision"},
    ])
    _, data = _replay_deferring_every_turn(tmp_path, gate, labels)
    starts = {Path(s["transcript"]).name: s["steps"][0]["reason"] for s in data["sessions"]}
    assert starts == {first.name: "SKIP_NOTHING_STANDING", second.name: "REMINDED_CARRIED_WRITEBACK"}, starts
    writeback = data["scores"]["writeback"]
    assert writeback["reminded_at_next_session"] == 1 and writeback["deferred_not_reminded"] == 1, writeback
    assert writeback["recall_blocked_or_reminded"] == 0.5, writeback


def test_the_replay_s_carried_turn_waits_for_a_session_that_starts_after_it(tmp_path: Path, gate: Gate) -> None:
    """Two sessions of one project that overlap: the one that began first ends deferred after the other began, so
    the other's start cannot have seen it; and on the recorded clock, a third session 17 days later is past the
    week a deferred turn is kept."""
    first, _ = _deferring_session(tmp_path, "5e551011-aaaa-bbbb-cccc-00000000000d", "/srv/app", 3)
    overlapping, _ = _deferring_session(tmp_path, "5e551011-aaaa-bbbb-cccc-00000000000e", "/srv/app", 3)
    late, _ = _deferring_session(tmp_path, "5e551011-aaaa-bbbb-cccc-00000000000f", "/srv/app", 20)
    lines = first.read_bytes().splitlines()  # it opens an hour before the other; both turns end at 10:00:05
    first.write_bytes(lines[0].replace(b"T10:", b"T09:", 1) + b"\n" + b"\n".join(lines[1:]) + b"\n")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "writeback.toml").write_text("[score]\nthreshold = 9\n")
    code, out, err = gate("replay", str(late), str(overlapping), str(first), "--rules", str(rules), "--json", "--steps")
    assert code == 0, err
    starts = {Path(s["transcript"]).name: s["steps"][0]["reason"] for s in json.loads(out)["sessions"]}
    assert set(starts.values()) == {"SKIP_NOTHING_STANDING"}, starts
