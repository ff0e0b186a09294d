"""Compiled regex programs kept across processes (gate/literals.py, issue 31): a pattern's program, compiled
once, is handed to the engine by later processes, and matches exactly as re.compile's does."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_literals import PATTERNS, _texts

import gate.literals as literals
from gate.install.launcher import hook_argv


@pytest.fixture(autouse=True)
def fresh_programs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(literals, "_programs", None, raising=False)  # this test's GATE_HOME, read afresh
    monkeypatch.setattr(literals, "_unsaved", None, raising=False)


def _same(a: re.Pattern[str], b: re.Pattern[str], texts: list[str]) -> None:
    assert (a.pattern, a.flags, a.groups, a.groupindex) == (b.pattern, b.flags, b.groups, b.groupindex)
    for text in texts:
        first, second = a.search(text), b.search(text)
        assert (first and (first.span(), first.groups())) == (second and (second.span(), second.groups())), text


@pytest.mark.parametrize("flags", [re.IGNORECASE, 0])
def test_a_kept_program_matches_as_re_compile_does(flags: int) -> None:
    texts = _texts()[:400]
    fresh = [literals.compile_cached(pattern, flags) for pattern in PATTERNS]  # compiled here
    assert not Path(literals._programs_file()).exists()  # kept once, when the process ends:
    literals.save_new_programs()
    assert Path(literals._programs_file()).is_file()
    literals._programs = None  # as the next process finds it: from the file
    kept = [literals.compile_cached(pattern, flags) for pattern in PATTERNS]
    for pattern, a, b in zip(PATTERNS, fresh, kept, strict=True):
        reference = re.compile(pattern, flags)
        _same(a, reference, texts)
        _same(b, reference, texts)


def test_a_damaged_cache_costs_a_compile_not_a_wrong_answer() -> None:
    pattern = r"\b(?:we|i)\s+(?:decided|chose)\s+(?P<what>\w+)"
    literals.compile_cached(pattern, re.IGNORECASE)
    literals.save_new_programs()
    path = Path(literals._programs_file())
    programs = literals._known_programs()
    out_flags, code, groups, groupindex, indexgroup = programs[(pattern, int(re.IGNORECASE))]
    programs[(pattern, int(re.IGNORECASE))] = (out_flags, code[:-8] + b"\xff" * 8, groups, groupindex, indexgroup)
    literals._save_programs(programs)
    literals._programs = None
    damaged = literals.compile_cached(pattern, re.IGNORECASE)  # the engine refuses the program: compiled afresh
    assert damaged.search("We decided postgres").group("what") == "postgres"
    path.write_bytes(b"not marshal at all")
    literals._programs = None
    assert literals.compile_cached(pattern, re.IGNORECASE).search("I chose sqlite").group("what") == "sqlite"
    with pytest.raises(re.error):
        literals.compile_cached("(unclosed", 0)


PROBE = """
import json, sys
from re import _parser
parsed = []
real = _parser.parse
_parser.parse = lambda *args, **kwargs: parsed.append(args[0]) or real(*args, **kwargs)
from gate.hook import main
main()
import gate.literals
gate.literals.save_new_programs()  # as gate.hook.entry does before it leaves
sys.stdout.write("\\n" + json.dumps([p for p in parsed if isinstance(p, str)]))
"""


def test_a_later_stop_hook_parses_no_pattern_of_gates(project: Path, tmp_path: Path) -> None:
    """The rules' patterns and gate's own (the gates', the audit's, the transcript reader's) come from kept
    programs; what is left is the standard library's own (json's, compiled at its import)."""
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "fix it"}}) + "\n")
    message = ("The root cause was a race in the scheduler. I decided to guard it with a lock instead of a retry, "
               "because retries hid the race. The test passes now.")
    *switches, entry = hook_argv(sys.executable)
    code = entry.removesuffix("from gate.hook import entry; entry()") + "\n" + PROBE
    rule_patterns = set(PATTERNS)
    bare = code.replace("from gate.hook import main\nmain()\n", "import json\n")
    done = subprocess.run([*switches, bare], capture_output=True, timeout=60, cwd=project)
    stdlib = set(json.loads(done.stdout.decode().rsplit("\n", 1)[-1]))
    parsed = []
    for session in ("first", "second"):  # the first also builds the rules snapshot, which parses every pattern
        event = {"session_id": session, "transcript_path": str(transcript), "cwd": str(project),
                 "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": message}
        done = subprocess.run([*switches, code], input=json.dumps(event).encode(), capture_output=True, timeout=60,
                              cwd=project, env=dict(os.environ))
        assert done.returncode == 0, done.stderr
        parsed.append(set(json.loads(done.stdout.decode().rsplit("\n", 1)[-1])))
    assert len(parsed[0] & rule_patterns) > 5  # the rules' patterns this turn needed, compiled (and kept)
    assert not parsed[1] - stdlib, sorted(parsed[1] - stdlib)  # the next process took them all from the cache


def test_bytes_patterns_are_kept_too() -> None:
    from gate.session.transcript import CONVERSATION_TYPE

    for _ in range(2):  # compiled, then taken from the file
        literals._programs = None
        pattern = literals.compile_cached(CONVERSATION_TYPE)
        literals.save_new_programs()
        assert pattern.pattern == CONVERSATION_TYPE and pattern.flags == re.compile(CONVERSATION_TYPE).flags
        assert pattern.search(b'{"type": "assistant", "message": {}}') and not pattern.search(b'{"type": "summary"}')
