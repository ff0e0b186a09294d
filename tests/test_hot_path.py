"""The hook path imports only the standard library, tantivy and PyStemmer — checked on every event, by module name."""

from __future__ import annotations

import json
import subprocess
import sys
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
