"""The transcript tail reader: the current turn, from the end, whatever the file looks like."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gate.session import transcript as tr
from gate.session.transcript import previous_turn_files, read_turn
from gate.session.turn import ToolUse, Turn

sys.path.insert(0, str(Path(__file__).parent / "data"))
from cli_transcript import Transcript


def _write(tmp_path: Path, t: Transcript, tail: bytes = b"") -> str:
    path = tmp_path / "session.jsonl"
    path.write_bytes(t.text().encode() + tail)
    return str(path)


def _two_turns() -> Transcript:
    t = Transcript()
    t.prompt("explain the ledger format").say("The ledger is one JSON file per session.")
    t.prompt("fix the flaky retry test in tests/test_retry.py")
    t.tool("Read", {"file_path": "/workspace/project/tests/test_retry.py"}, "1\tdef test_retry(): ...")
    t.noise("system").noise("api-request-blob").noise("cost-state").noise("last-prompt")
    t.tool("Edit", {"file_path": "/workspace/project/gate/retry.py", "old_string": "a", "new_string": "b"}, "ok")
    t.tool("Bash", {"command": "pytest -q tests/test_retry.py", "description": "run"}, "3 passed in 0.2s")
    t.say("The test slept on a real clock; it now uses a fake one.")
    return t


def test_reads_the_current_turn_only(tmp_path: Path) -> None:
    turn = read_turn(_write(tmp_path, _two_turns()))
    assert turn.prompt == "fix the flaky retry test in tests/test_retry.py"
    assert turn.complete and not turn.from_fallback
    assert turn.assistant_texts == ["The test slept on a real clock; it now uses a fake one."]
    assert [u.name for u in turn.tool_uses] == ["Read", "Edit", "Bash"]
    assert [r.text for r in turn.tool_results] == ["1\tdef test_retry(): ...", "ok", "3 passed in 0.2s"]
    assert turn.bash_commands() == ["pytest -q tests/test_retry.py"]
    assert turn.touched_files() == [
        "/workspace/project/tests/test_retry.py",
        "/workspace/project/gate/retry.py",
    ]
    # order is kept across uses and results
    seqs = [u.seq for u in turn.tool_uses]
    assert seqs == sorted(seqs)
    edit, run = turn.tool_uses[1], turn.tool_uses[2]
    assert turn.result_for(edit.id).seq < run.seq < turn.result_for(run.id).seq


def test_noise_lines_with_a_message_are_never_the_prompt(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("rename the config loader")
    t.say("Renamed.")
    for kind in ("api-request-blob", "last-prompt", "api-request", "cost-state", "attachment", "system"):
        t.noise(kind)
    turn = read_turn(_write(tmp_path, t))
    assert turn.prompt == "rename the config loader"
    assert turn.assistant_texts == ["Renamed."]


def test_hook_feedback_and_meta_lines_are_not_prompts(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("decide on the queue backend")
    t.say("We'll go with SQLite because it needs no server.")
    t.hook_feedback("MEMORY CHECK: this turn made a decision.")
    t.tool("Bash", {"command": 'gate remember "Queue backend is SQLite"'}, '{"id": "m-1a2b3c"}')
    t.say("Stored as m-1a2b3c.")
    turn = read_turn(_write(tmp_path, t))
    assert turn.prompt == "decide on the queue backend"
    assert turn.hook_feedback == 1
    assert turn.assistant_texts[0].startswith("We'll go with SQLite")
    assert turn.bash_commands() == ['gate remember "Queue backend is SQLite"']


def test_prompt_as_text_blocks_and_interruptions(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("first prompt")
    t.prompt("add a --json flag to stats", blocks=True)
    entry = dict(t.lines[-3])
    entry["message"] = {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]}
    t.lines.append(entry)
    t.say("Added.")
    turn = read_turn(_write(tmp_path, t))
    assert turn.prompt == "add a --json flag to stats"


def test_truncated_last_line_and_garbage(tmp_path: Path) -> None:
    t = _two_turns()
    path = _write(tmp_path, t, b'not json at all\n\xff\xfe\x00garbage\n{"type":"assistant","message":{"con')
    turn = read_turn(path)
    assert turn.prompt.startswith("fix the flaky retry test")
    assert len(turn.tool_uses) == 3


def test_non_utf8_inside_a_line(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("parse the latin-1 export")
    raw = t.text().encode() + (
        b'{"type":"assistant","message":{"id":"m","role":"assistant","content":'
        b'[{"type":"text","text":"caf\xe9 done"}]}}\n'
    )
    path = tmp_path / "s.jsonl"
    path.write_bytes(raw)
    turn = read_turn(str(path))
    assert turn.prompt == "parse the latin-1 export"
    assert turn.assistant_texts and turn.assistant_texts[0].startswith("caf")


def test_missing_file_directory_and_none_fall_back(tmp_path: Path) -> None:
    for path in (str(tmp_path / "absent.jsonl"), str(tmp_path), None, ""):
        turn = read_turn(path, "We decided to keep the cache.")
        assert turn.from_fallback
        assert turn.assistant_texts == ["We decided to keep the cache."]
        assert turn.prompt == "" and turn.tool_uses == []
    assert read_turn(str(tmp_path / "absent.jsonl")).assistant_texts == []


def test_last_assistant_message_added_when_the_file_lags(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("what changed?")
    path = _write(tmp_path, t)
    assert read_turn(path, "Only the README.").assistant_texts == ["Only the README."]
    t.say("Only the README.")
    path = _write(tmp_path, t)
    assert read_turn(path, "Only the README.").assistant_texts == ["Only the README."]


def test_compaction_boundary_ends_the_turn(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("old prompt").say("old answer")
    t.lines.append({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"})
    t.say("continuing after compaction")
    turn = read_turn(_write(tmp_path, t))
    assert turn.prompt == "" and turn.complete
    assert turn.assistant_texts == ["continuing after compaction"]


def test_sidechain_lines_are_skipped(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("review the diff")
    t.say("Reviewing.")
    side = dict(t.lines[-1])
    side["isSidechain"] = True
    side["message"] = {"role": "user", "content": "subagent prompt"}
    side["type"] = "user"
    t.lines.append(side)
    turn = read_turn(_write(tmp_path, t))
    assert turn.prompt == "review the diff"


def test_previous_turn_files(tmp_path: Path) -> None:
    assert previous_turn_files(str(tmp_path / "nope.jsonl")) == []
    assert previous_turn_files(None) == []
    t = _two_turns()
    assert previous_turn_files(_write(tmp_path, t)) == [
        "/workspace/project/tests/test_retry.py",
        "/workspace/project/gate/retry.py",
    ]


def test_touched_files_from_all_file_tools() -> None:
    turn = Turn(
        tool_uses=[
            ToolUse("1", "Grep", {"pattern": "x", "path": "gate/memory"}),
            ToolUse("2", "Glob", {"pattern": "*.py", "path": "tests"}),
            ToolUse("3", "NotebookEdit", {"notebook_path": "nb/a.ipynb"}),
            ToolUse("4", "MultiEdit", {"file_path": "gate/x.py", "edits": []}),
            ToolUse("5", "Read", {"file_path": "gate/x.py"}),
            ToolUse("6", "Bash", {"command": "cat secret.txt"}),
            ToolUse("7", "Write", {"file_path": 42}),
        ]
    )
    assert turn.touched_files() == ["gate/memory", "tests", "nb/a.ipynb", "gate/x.py"]


def test_a_line_longer_than_a_block(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("summarise the log")
    t.tool("Bash", {"command": "cat build.log"}, "x" * (3 * tr.BLOCK_SIZE + 17))
    t.say("The build is fine.")
    turn = read_turn(_write(tmp_path, t))
    assert turn.prompt == "summarise the log"
    assert len(turn.tool_results[0].text) == 3 * tr.BLOCK_SIZE + 17


def test_max_bytes_bounds_a_giant_turn(tmp_path: Path) -> None:
    t = Transcript()
    t.prompt("the real prompt")
    for i in range(200):
        t.tool("Bash", {"command": f"echo {i}"}, "y" * 2000)
    t.say("end")
    turn = read_turn(_write(tmp_path, t), max_bytes=50_000)
    assert not turn.complete and turn.prompt == ""
    assert turn.assistant_texts == ["end"]
    assert 5 < len(turn.tool_uses) < 60


def test_large_file_reads_only_the_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 20 MB session: the reader reads a few blocks from the end, never the whole file."""
    path = tmp_path / "big.jsonl"
    filler = Transcript()
    for i in range(60):
        filler.prompt(f"old prompt {i} " + "lorem ipsum " * 50)
        filler.tool("Read", {"file_path": f"/old/{i}.py"}, "z" * 4000)
        filler.noise("api-request-blob")
    chunk = filler.text().encode()
    with open(path, "wb") as handle:
        while handle.tell() < 20_000_000:
            handle.write(chunk)
        last = Transcript()
        last.prompt("the last prompt")
        last.tool("Edit", {"file_path": "/new/file.py"}, "ok")
        last.say("done")
        handle.write(last.text().encode())
    assert path.stat().st_size > 20_000_000

    read_sizes: list[int] = []
    real_open = open

    class Spy:
        def __init__(self, handle):  # type: ignore[no-untyped-def]
            self._h = handle

        def __enter__(self):  # type: ignore[no-untyped-def]
            self._h.__enter__()
            return self

        def __exit__(self, *exc):  # type: ignore[no-untyped-def]
            return self._h.__exit__(*exc)

        def seek(self, *a):  # type: ignore[no-untyped-def]
            return self._h.seek(*a)

        def read(self, n: int = -1) -> bytes:
            data = self._h.read(n)
            read_sizes.append(len(data))
            return data

    monkeypatch.setattr(tr, "open", lambda p, mode="r": Spy(real_open(p, mode)), raising=False)
    turn = read_turn(str(path))
    assert turn.prompt == "the last prompt"
    assert turn.touched_files() == ["/new/file.py"]
    # what it read, counted (not timed): the turn came through the spy, and a block or two of the 20 MB
    assert read_sizes and sum(read_sizes) <= 2 * tr.BLOCK_SIZE


def test_garbage_only_file(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_bytes(b'\x00\x01\x02\n[1,2,3]\n"str"\n' + json.dumps({"type": "user"}).encode() + b"\n")
    turn = read_turn(str(path), "fallback text")
    assert turn.prompt == ""
    assert turn.assistant_texts == ["fallback text"]
    empty = tmp_path / "e.jsonl"
    empty.write_bytes(b"")
    assert read_turn(str(empty)).assistant_texts == []
