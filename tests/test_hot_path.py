"""The hook path imports only the standard library, tantivy and PyStemmer — checked on every event, by module name."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gate.paths import audit_log_file

FORBIDDEN = ("pydantic", "pydantic_settings", "loguru", "tomli_w", "platformdirs")
# What a hook process may import beyond the standard library.
ALLOWED_THIRD_PARTY = ("tantivy", "Stemmer", "cython_runtime", "gate")  # PyStemmer is a Cython module

PROBE = """
import json, sys
from gate.hook import main
main()
sys.stdout.write("\\n" + json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("UserPromptSubmit", {"prompt": "When does the reserve account waterfall trigger?"}),
        ("Stop", {"stop_hook_active": False, "last_assistant_message": "We decided to use Postgres because X."}),
        ("SessionStart", {"source": "startup"}),
        ("PreCompact", {"trigger": "manual", "custom_instructions": ""}),
        ("PreToolUse", {"tool_name": "Read", "tool_input": {"file_path": "src/a.py"}}),
    ],
)
def test_hook_imports_nothing_heavy(project: Path, gate, name: str, fields: dict) -> None:
    gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    event = {"session_id": "s", "transcript_path": "", "cwd": str(project), "hook_event_name": name, **fields}
    proc = subprocess.run(
        [sys.executable, "-P", "-c", PROBE], input=json.dumps(event).encode(), capture_output=True, timeout=60
    )
    modules = json.loads(proc.stdout.decode().rsplit("\n", 1)[-1])
    # the evaluation really ran (a hook that failed open early would import little and prove nothing)
    last = json.loads(Path(audit_log_file()).read_text().splitlines()[-1])
    assert last["event"] == name and last["decision"] != "failed_open", last
    loaded = {m.split(".")[0] for m in modules}
    assert not loaded & set(FORBIDDEN), sorted(loaded & set(FORBIDDEN))
    stdlib = set(sys.stdlib_module_names)
    third_party = {m for m in loaded if m not in stdlib and not m.startswith("_") and m not in ALLOWED_THIRD_PARTY}
    # site-packages' own startup hooks (e.g. an editable finder) may appear; gate's code must add none
    assert not {m for m in third_party if not m.startswith("__editable__")}, sorted(third_party)


# Standard-library modules that cost a hook process milliseconds to import (measured with bench/, see the
# README's performance section): pathlib pulls in urllib.parse and ipaddress, typing and dataclasses build
# classes at import, tomllib parses; the hook path has plain-code equivalents for all of them.
SLOW_STDLIB = ("pathlib", "urllib", "ipaddress", "typing", "dataclasses", "contextlib", "tomllib", "inspect",
               "hashlib", "shutil", "subprocess", "importlib.util", "datetime")


def _modules_of(event: dict) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-P", "-c", PROBE], input=json.dumps(event).encode(), capture_output=True, timeout=60
    )
    last = json.loads(Path(audit_log_file()).read_text().splitlines()[-1])
    assert last["event"] == event["hook_event_name"] and last["decision"] != "failed_open", last
    return set(json.loads(proc.stdout.decode().rsplit("\n", 1)[-1]))


def test_steady_state_hooks_skip_slow_imports_and_a_follow_up_prompt_skips_tantivy(project: Path, gate) -> None:
    gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    base = {"session_id": "steady", "transcript_path": "", "cwd": str(project)}
    first = {**base, "hook_event_name": "UserPromptSubmit",
             "prompt": "When does the reserve account waterfall trigger?"}
    follow_up = {**base, "hook_event_name": "UserPromptSubmit", "prompt": "And the reserve waterfall for overdue days?"}
    time.sleep(0.2)  # past the racy window (gate/memory/scan.py): the first prompt's cue table and index stay valid
    _modules_of(first)  # the first prompt of a session is a shift: it searches, so it loads tantivy
    _modules_of({**first, "session_id": "steady-2"})  # and, the first time, parses the rules (then kept as JSON)
    modules = _modules_of(follow_up)
    last = json.loads(Path(audit_log_file()).read_text().splitlines()[-1])
    assert last["reason"] == "SKIP_NO_SHIFT", last
    assert "tantivy" not in modules
    assert not {m for m in modules if m.split(".")[0] in SLOW_STDLIB or m in SLOW_STDLIB}
    # what a silent follow-up has no use for: rendering, tool-call cues, trigger parsing
    unused = {"gate.render", "gate.gates.anchors", "gate.memory.triggers", "gate.memory.search"}
    assert not modules & unused, sorted(modules & unused)
    events = [
        {"hook_event_name": "UserPromptSubmit", "prompt": "How is the payroll export to the bank formatted?"},
        {"hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "We decided to use X."},
        {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "src/a.py"}},
        {"hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": ""},
        {"hook_event_name": "SessionStart", "source": "compact"},
    ]
    for fields in events:
        _modules_of({**base, **fields})  # the first of its kind may parse its rules (then kept as JSON)
        modules = _modules_of({**base, **fields})
        slow = {m for m in modules if m.split(".")[0] in SLOW_STDLIB or m in SLOW_STDLIB}
        if "tantivy" in modules:
            slow -= {"datetime", "_datetime"}  # tantivy's own import; only a search loads it
        assert not slow, (fields["hook_event_name"], sorted(slow))
        # building things (cue table, regex prefilters, memory files) happens when something changed, not here
        cold = modules & {"gate.memory.cue_build", "gate.literal_analysis", "gate.memory.model", "gate.memory.files"}
        assert not cold, (fields["hook_event_name"], sorted(cold))
