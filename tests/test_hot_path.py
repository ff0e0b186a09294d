"""The hook path imports only the standard library, tantivy and PyStemmer — checked on every event, by module name.

What counts is what gate's code imports, not what the interpreter loads before gate runs: Debian's and Ubuntu's
Python import a `sitecustomize` module at start-up (Ubuntu's installs the apport crash hook), a venv's .pth
files may load a finder. So every check subtracts what a bare interpreter loads in the same environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gate.paths import ProjectPaths, audit_log_file

FORBIDDEN = ("pydantic", "pydantic_settings", "loguru", "tomli_w", "platformdirs", "yaml")
# What a hook process may import beyond the standard library.
ALLOWED_THIRD_PARTY = ("tantivy", "Stemmer", "cython_runtime", "gate")  # PyStemmer is a Cython module

PROBE = """
import json, sys
from gate.hook import main
main()
sys.stdout.write("\\n" + json.dumps(sorted(sys.modules)))
"""
# The same process without gate: what the interpreter and site-packages load by themselves (and json, which the
# probe itself needs to report).
BARE = """
import json, sys
sys.stdout.write("\\n" + json.dumps(sorted(sys.modules)))
"""

# What Ubuntu's sitecustomize (/etc/python3.X/sitecustomize.py) does: install apport's crash hook when the
# apport_python_hook module can be imported. Debian has no apport, and a venv does not see the system's
# dist-packages where Ubuntu keeps it: there sitecustomize alone is imported. Emulated here at its fullest.
UBUNTU_SITECUSTOMIZE = """
try:
    import apport_python_hook
except ImportError:
    pass
else:
    apport_python_hook.install()
"""
APPORT_HOOK = """
import os, sys

def apport_excepthook(exc_type, exc_obj, exc_tb):
    sys.__excepthook__(exc_type, exc_obj, exc_tb)

def install():
    sys.excepthook = apport_excepthook
"""


def ubuntu_startup_env(directory: Path) -> dict[str, str]:
    """This environment plus Ubuntu's start-up hook: a sitecustomize that installs apport's excepthook."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "sitecustomize.py").write_text(UBUNTU_SITECUSTOMIZE, encoding="utf-8")
    (directory / "apport_python_hook.py").write_text(APPORT_HOOK, encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(directory), env.get("PYTHONPATH", "")]))
    return env


# In the environment a test passes around: how the hook process is started. "launcher" is how gate install
# wires it (gate/install/launcher.py: `-I -S`, the hook's import directories on sys.path); "plain" is the `-P`
# form, under `site`, of an interpreter gate cannot ask (and of settings written by earlier gates).
FORM = "_GATE_TEST_HOOK_FORM"


@pytest.fixture(params=["launcher", "as-is", "ubuntu-startup"])
def startup_env(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """The environments hooks run in: as gate install runs them; the plain form under this interpreter as it
    is, and the same with Ubuntu's start-up hook."""
    if request.param == "ubuntu-startup":
        return {**ubuntu_startup_env(tmp_path / "ubuntu-site"), FORM: "plain"}
    return {**os.environ, FORM: "launcher" if request.param == "launcher" else "plain"}


def _loaded(code: str, env: dict[str, str], stdin: bytes = b"") -> set[str]:
    from gate.install.launcher import hook_argv

    env = dict(env)
    if env.pop(FORM, "plain") == "launcher":
        *switches, entry = hook_argv(sys.executable)
        assert switches[1:] == ["-I", "-S", "-c"], switches
        argv = [*switches, entry.removesuffix("from gate.hook import entry; entry()") + "\n" + code]
    else:
        argv = [sys.executable, "-P", "-c", code]
    proc = subprocess.run(argv, input=stdin, capture_output=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return set(json.loads(proc.stdout.decode().rsplit("\n", 1)[-1]))


def startup_modules(env: dict[str, str]) -> set[str]:
    """What a bare interpreter loads in this environment, before any of gate's code runs."""
    return _loaded(BARE, env)


def hook_modules(event: dict, env: dict[str, str]) -> set[str]:
    """What a hook process loads on this event beyond the interpreter's own start-up: gate's imports."""
    modules = _loaded(PROBE, env, json.dumps(event).encode())
    # the evaluation really ran (a hook that failed open early would import little and prove nothing)
    last = json.loads(Path(audit_log_file()).read_text().splitlines()[-1])
    assert last["event"] == event["hook_event_name"] and last["decision"] != "failed_open", last
    return modules - startup_modules(env)


def test_the_interpreter_startup_is_measured_not_assumed(project: Path, gate, tmp_path: Path) -> None:
    """With Ubuntu's start-up hook in place, a bare interpreter loads it (so a hook process does too, and the old
    check counted it as gate's import), and the subtraction leaves gate's own imports."""
    gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    env = ubuntu_startup_env(tmp_path / "ubuntu-site")
    startup = startup_modules(env)
    assert {"sitecustomize", "apport_python_hook"} <= startup, sorted(startup)
    hook_code = PROBE.replace("main()", "main()\nassert sys.excepthook.__module__ == 'apport_python_hook'")
    event = {"session_id": "s", "transcript_path": "", "cwd": str(project), "hook_event_name": "SessionStart",
             "source": "startup"}
    raw = _loaded(hook_code, env, json.dumps(event).encode())
    assert {"sitecustomize", "apport_python_hook"} <= raw
    imported = hook_modules(event, env)
    assert not imported & {"sitecustomize", "apport_python_hook"}
    assert {"gate.hook", "gate.gates.events.session_start"} <= imported, sorted(imported)


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
def test_hook_imports_nothing_heavy(project: Path, gate, startup_env: dict[str, str], name: str, fields: dict) -> None:
    gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    event = {"session_id": "s", "transcript_path": "", "cwd": str(project), "hook_event_name": name, **fields}
    imported = hook_modules(event, startup_env)
    assert "gate.hook" in imported  # the subtraction keeps what gate loads
    loaded = {m.split(".")[0] for m in imported}
    assert not loaded & set(FORBIDDEN), sorted(loaded & set(FORBIDDEN))
    stdlib = set(sys.stdlib_module_names)
    third_party = {m for m in loaded if m not in stdlib and not m.startswith("_") and m not in ALLOWED_THIRD_PARTY}
    assert not third_party, sorted(third_party)


# Standard-library modules that cost a hook process milliseconds to import (measured with bench/, see the
# README's performance section): pathlib pulls in urllib.parse and ipaddress, typing and dataclasses build
# classes at import, tomllib parses; the hook path has plain-code equivalents for all of them.
SLOW_STDLIB = ("pathlib", "urllib", "ipaddress", "typing", "dataclasses", "contextlib", "tomllib", "inspect",
               "hashlib", "shutil", "subprocess", "importlib.util", "datetime")


def settle_store_dirs(project: Path) -> None:
    """Date the store directories a minute back: past the racy window (gate/memory/store/scan.py), a directory's
    mtime vouches for its listing, so what the first hook builds is not looked at again (no waiting it out)."""
    paths = ProjectPaths.for_cwd(project)
    written = time.time_ns() - 60 * 1_000_000_000
    for scope in ("private", "team", "user"):
        if os.path.isdir(paths.store_for_scope(scope)):
            os.utime(paths.store_for_scope(scope), ns=(written, written))


def test_steady_state_hooks_skip_slow_imports_and_a_follow_up_prompt_skips_tantivy(
    project: Path, gate, startup_env: dict[str, str]
) -> None:
    gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    base = {"session_id": "steady", "transcript_path": "", "cwd": str(project)}
    first = {**base, "hook_event_name": "UserPromptSubmit",
             "prompt": "When does the reserve account waterfall trigger?"}
    follow_up = {**base, "hook_event_name": "UserPromptSubmit", "prompt": "And the reserve waterfall for overdue days?"}
    settle_store_dirs(project)  # the first prompt's cue table and index then stay valid for the ones after it
    hook_modules(first, startup_env)  # the first prompt of a session is a shift: it searches, so it loads tantivy
    hook_modules({**first, "session_id": "steady-2"}, startup_env)  # and, the first time, parses the rules
    modules = hook_modules(follow_up, startup_env)
    last = json.loads(Path(audit_log_file()).read_text().splitlines()[-1])
    assert last["reason"] == "SKIP_NO_SHIFT", last
    assert "tantivy" not in modules
    assert not {m for m in modules if m.split(".")[0] in SLOW_STDLIB or m in SLOW_STDLIB}
    # what a silent follow-up has no use for: rendering, tool-call cues, trigger parsing
    unused = {"gate.render", "gate.gates.delivery.anchors", "gate.memory.cues.triggers", "gate.memory.search"}
    assert not modules & unused, sorted(modules & unused)
    events = [
        {"hook_event_name": "UserPromptSubmit", "prompt": "How is the payroll export to the bank formatted?"},
        {"hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "We decided to use X."},
        {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "src/a.py"}},
        {"hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": ""},
        {"hook_event_name": "SessionStart", "source": "compact"},
    ]
    for fields in events:
        hook_modules({**base, **fields}, startup_env)  # the first of its kind may parse its rules (then kept as JSON)
        modules = hook_modules({**base, **fields}, startup_env)
        slow = {m for m in modules if m.split(".")[0] in SLOW_STDLIB or m in SLOW_STDLIB}
        if "tantivy" in modules:
            slow -= {"datetime", "_datetime"}  # tantivy's own import; only a search loads it
        assert not slow, (fields["hook_event_name"], sorted(slow))
        # building things (cue table, regex prefilters, memory files) happens when something changed, not here
        cold = modules & {"gate.memory.cues.build", "gate.literal_analysis", "gate.memory.model",
                          "gate.memory.store.files"}
        assert not cold, (fields["hook_event_name"], sorted(cold))


# Every compiled pattern reaches the engine through _sre.compile, whether re.compile's or a kept program's.
COMPILED = """
import _sre, json, sys
compiled = []
real = _sre.compile
_sre.compile = lambda pattern, *rest: compiled.append(str(pattern)) or real(pattern, *rest)
from gate.hook import main
main()
sys.stdout.write("\\n" + json.dumps(sorted(set(compiled))))
"""


def test_an_english_prompt_compiles_no_pattern_of_the_unspaced_scripts(project: Path, gate) -> None:
    """The Han/kana/Hangul pattern costs a hook ~1 ms to compile (issue 31): only text that is not ASCII needs it."""
    gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    event = {"session_id": "s", "transcript_path": "", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
             "prompt": "When does the reserve account waterfall trigger?"}
    for prompt in (event["prompt"], "And the reserve waterfall for overdue days?"):  # a shift, then a follow-up
        compiled = _loaded(COMPILED, {**os.environ, FORM: "launcher"}, json.dumps({**event, "prompt": prompt}).encode())
        assert compiled, "the probe saw no compiled pattern at all"
        assert not [p for p in compiled if "\u3040" in p or "\\u3040" in p], prompt
    chinese = {**event, "session_id": "zh", "prompt": "看一下储备账户的瀑布触发"}
    compiled = _loaded(COMPILED, {**os.environ, FORM: "launcher"}, json.dumps(chinese).encode())
    assert [p for p in compiled if "\u3040" in p or "\\u3040" in p]  # the probe does see it when it is used


# The hook as the launcher runs it, then what entry() does on the way out (keep newly compiled programs), then
# the modules loaded — written without json, which the probe must not import itself.
KEEPING = """
import sys
from gate.hook import main
main()
sys.modules["gate.literals"].save_new_programs()
sys.stdout.write('\\n["' + '", "'.join(sorted(sys.modules)) + '"]')
"""


def test_steady_state_hooks_import_neither_json_nor_re(project: Path, gate) -> None:
    """json, re, enum, functools and collections cost a hook process some 7 ms to import (issue 31): the hooks
    read and write JSON through gate/fastjson.py, compile their regexes from kept programs and cache through
    gate/memo.py, so a hook whose rules and patterns were seen before loads none of them."""
    gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    gate("remember", "Always run the linter before committing", "--kind", "directive")
    settle_store_dirs(project)
    env = {**os.environ, FORM: "launcher"}
    events = [
        {"hook_event_name": "UserPromptSubmit", "prompt": "When does the reserve account waterfall trigger?"},
        {"hook_event_name": "Stop", "stop_hook_active": False,
         "last_assistant_message": "The root cause was a stale lock. I decided to use a lease, because it expires."},
        {"hook_event_name": "SessionStart", "source": "startup"},
        {"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": {"file_path": "src/a.py"}},
    ]
    for number, fields in enumerate(events):
        for run in range(3):  # the first runs parse the rules and compile the patterns, and keep both
            event = {"session_id": f"kept-{number}-{run}", "transcript_path": "", "cwd": str(project), **fields}
            modules = _loaded(KEEPING, env, json.dumps(event).encode())
        last = json.loads(Path(audit_log_file()).read_text().splitlines()[-1])
        assert last["event"] == fields["hook_event_name"] and last["decision"] != "failed_open", last
        heavy = modules & {"json", "re", "enum", "functools", "collections"}
        assert not heavy, (fields["hook_event_name"], sorted(heavy))


def test_a_read_only_command_while_the_search_is_owed_imports_neither_re_nor_shlex(project: Path, gate) -> None:
    """The search the agent must run reads every Bash line while it is owed (gate/commandline.py): its words come
    from gate/shellwords.py split_words, not shlex, whose `re` and enum cost the call ~5 ms (bench: search_first)."""
    gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    settle_store_dirs(project)
    env = {**os.environ, FORM: "launcher"}
    for run in range(3):  # the first runs parse the rules and compile the patterns, and keep both
        session = f"owed-{run}"
        prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "When does the reserve account waterfall trigger?"}
        _loaded(KEEPING, env, json.dumps({"session_id": session, "transcript_path": "", "cwd": str(project),
                                          **prompt}).encode())
        owed = json.loads(Path(audit_log_file()).read_text().splitlines()[-1])
        assert owed["event"] == "UserPromptSubmit" and owed["decision"] == "fired", owed
        bash = {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": {"command": "git status && git diff --stat HEAD~1 -- src/ | head -40"}}
        modules = _loaded(KEEPING, env, json.dumps({"session_id": session, "transcript_path": "",
                                                    "cwd": str(project), **bash}).encode())
    last = json.loads(Path(audit_log_file()).read_text().splitlines()[-1])
    assert last["event"] == "PreToolUse" and last["decision"] != "failed_open", last
    assert "gate.commandline" in modules  # the line was read: the search was owed
    assert not modules & {"re", "shlex", "enum"}, sorted(modules & {"re", "shlex", "enum"})
