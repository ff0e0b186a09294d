"""The hook process as the launcher starts it (issue 31): `-I -S` with the hook's import directories named,
gc off, and os._exit once the answer, the audit and any error line are out."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from gate.install import launcher
from gate.paths import audit_log_file, error_log_file

REPO = Path(__file__).resolve().parents[1]


def run(argv: list[str], event: dict, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=json.dumps(event).encode(), capture_output=True, timeout=60, cwd=cwd,
                          env=env or dict(os.environ))


def audit() -> list[dict]:
    return [json.loads(line) for line in Path(audit_log_file()).read_text().splitlines()]


def test_the_command_names_the_hooks_import_directories_and_skips_site() -> None:
    argv = launcher.hook_argv(sys.executable)
    assert argv[:4] == [sys.executable, "-I", "-S", "-c"]
    path = json.loads(argv[4].split("sys.path += ", 1)[1].split("; ", 1)[0])
    assert str(REPO) in path  # this checkout (an editable install)
    assert any(Path(entry, "tantivy").is_dir() for entry in path)
    imports = "import gate, tantivy, Stemmer; print('site' in sys.modules, gate.__file__)"
    probe = argv[4].replace("from gate.hook import entry; entry()", imports)
    done = subprocess.run([*argv[:4], probe], capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", str(REPO / "gate" / "__init__.py")]


def test_a_delivering_hook_leaves_by_os_exit_with_its_answer_and_audit_out(project: Path, gate) -> None:
    gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision",
         "--body", "x" * 3000)
    event = {"session_id": "s", "transcript_path": "", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
             "prompt": "When does the reserve account waterfall trigger?"}
    done = run(launcher.hook_argv(sys.executable), event, project)
    assert done.returncode == 0 and done.stderr == b""
    answer = json.loads(done.stdout)  # all of it: flushed before os._exit
    assert "Reserve account waterfall" in answer["hookSpecificOutput"]["additionalContext"]
    assert audit()[-1]["event"] == "UserPromptSubmit" and audit()[-1]["delivered"]


def test_a_failing_hook_still_fails_open_with_audit_and_error_lines(project: Path, gate) -> None:
    """os._exit skips nothing the fail-open promise owes: exit 0, no stdout, the error line and the audit line."""
    gate("remember", "Reserve account waterfall triggers at 30 days overdue", "--kind", "decision")
    event = {"session_id": "s", "transcript_path": "", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
             "prompt": "When does the reserve account waterfall trigger?"}
    broken = b'{"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": ' + json.dumps(str(project)).encode()
    done = subprocess.run(launcher.hook_argv(sys.executable), input=broken, capture_output=True, timeout=60,
                          cwd=project)
    assert (done.returncode, done.stdout) == (0, b"")
    assert audit()[-1]["decision"] == "failed_open" and audit()[-1]["error"] == "JSONDecodeError"
    assert "JSONDecodeError" in Path(error_log_file()).read_text()
    # stdout closed by the reader: the answer cannot go out; the exit is still 0, with nothing on stderr
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(launcher.hook_argv(sys.executable), input=json.dumps(event).encode(), stdout=write_end,
                              stderr=subprocess.PIPE, timeout=60, cwd=project)
    finally:
        os.close(write_end)
    assert done.returncode == 0 and done.stderr == b""
    assert audit()[-1]["event"] == "UserPromptSubmit" and audit()[-1]["delivered"]


def test_the_cwd_and_pythonpath_cannot_shadow_gate(project: Path, tmp_path: Path) -> None:
    """A project with its own `gate/` package, a PYTHONPATH naming another: the hook still runs this gate."""
    for place in (project, tmp_path / "elsewhere"):
        (place / "gate").mkdir(parents=True)
        (place / "gate" / "__init__.py").write_text("raise SystemExit(3)\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "elsewhere")}
    event = {"session_id": "s", "transcript_path": "", "cwd": str(project), "hook_event_name": "SessionStart",
             "source": "startup"}
    done = run(launcher.hook_argv(sys.executable), event, project, env)
    assert done.returncode == 0, done.stderr
    assert audit()[-1]["event"] == "SessionStart" and audit()[-1]["decision"] != "failed_open"


def test_the_shipped_rules_are_found_in_a_wheel_layout_without_site(tmp_path: Path) -> None:
    """A wheel puts gate in <prefix>/lib/pythonX.Y/site-packages and the rules in <prefix>/share/memory-gate/rules;
    under `-I -S` sys.prefix is the base interpreter's, so the rules are found from gate's own location."""
    prefix = tmp_path / "venv"
    site_packages = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    shutil.copytree(REPO / "gate", site_packages / "gate", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rules", prefix / "share" / "memory-gate" / "rules")
    code = (f"import sys; sys.path += {json.dumps([str(site_packages)])}; "
            "from gate.rules import shipped_rules_dir; print(shipped_rules_dir())")
    env = {k: v for k, v in os.environ.items() if k != "GATE_RULES_DIR"}
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60,
                          env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(prefix / "share" / "memory-gate" / "rules")


def test_an_older_gate_gets_the_plain_command(tmp_path: Path) -> None:
    """An interpreter that cannot say where its hook imports from (gone, or without gate) keeps the `-P` form."""
    assert launcher.hook_argv(str(tmp_path / "gone" / "python")) == [
        str(tmp_path / "gone" / "python"), "-P", "-c", "from gate.hook import main; main()"
    ]
    text = launcher.text(str(tmp_path / "gone" / "python"))
    assert "-P -c 'from gate.hook import main; main()'" in text
