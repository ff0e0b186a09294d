"""Helpers the hardening suites share: figures for the closing report, a hook run in-process, and a guard
that turns a hang into a failure."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

# Far beyond anything the suite runs, however loaded the machine: only a hang gets there. Never a speed check
# (speed is measured in bench/).
HANG_S = 120.0


class Hung(BaseException):
    """Raised into code still running after its hang guard's time (a BaseException: the code under test may
    catch every Exception, and a hook catches even this one; the guard fails the test either way)."""


@contextmanager
def hang_guard(what: str, seconds: float = HANG_S) -> Iterator[None]:
    """Fail the test when the block is still running after `seconds` (main thread only: SIGALRM)."""
    hung: list[bool] = []

    def interrupt(signum: int, frame: Any) -> None:
        hung.append(True)
        raise Hung

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except BaseException:
        if not hung:
            raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if hung:
        pytest.fail(f"{what}: still running after {seconds:.0f} s", pytrace=False)


def report(suite: str, figures: dict[str, Any]) -> None:
    """Print a suite's figures; with GATE_HARDENING_REPORT=FILE also append them there as a JSON line."""
    print(f"\n{suite} figures: {figures}")
    target = os.environ.get("GATE_HARDENING_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"suite": suite, **figures}) + "\n")


def hook_in_process(event: dict[str, Any]) -> str:
    """gate.hook.main() on this event with stdin/stdout swapped, as the real entry sees them; its stdout."""
    import gate.hook

    buffer = io.BytesIO()
    stdout = io.TextIOWrapper(buffer, encoding="utf-8", write_through=True)
    saved = sys.stdin, sys.stdout
    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(event).encode()), encoding="utf-8")
    sys.stdout = stdout
    try:
        assert gate.hook.main() == 0
    finally:
        sys.stdin, sys.stdout = saved
    return buffer.getvalue().decode()


def stop_verdict(answer: str | dict[str, Any] | None) -> dict[str, Any] | None:
    """The write-back gate's block read back from a Claude Code Stop hook's stdout (or its parsed JSON):
    {"decision": "block", "reason": …} when the answer is exactly the Stop's additionalContext or exactly a
    `decision: block` (the form gate.hook.claude_code_stop gives a CLI older than rules/writeback.toml
    [claude_code] stop_context_since, or one whose transcript names no version; tests/test_stop_answer_form.py
    checks which goes where), None for no answer; any other shape fails the test."""
    if not answer:
        return None
    data = json.loads(answer) if isinstance(answer, str) else answer
    if set(data) == {"decision", "reason"}:
        assert data["decision"] == "block" and isinstance(data["reason"], str), data
        return dict(data)
    assert set(data) == {"hookSpecificOutput"}, data
    specific = data["hookSpecificOutput"]
    assert isinstance(specific, dict) and set(specific) == {"hookEventName", "additionalContext"}, specific
    assert specific["hookEventName"] == "Stop", specific
    return {"decision": "block", "reason": specific["additionalContext"]}


def without_fix_guard(project: Any) -> None:
    """A project rules layer that turns the write-back fix guard off. For tests that end one fix turn again and
    again to reach the write-back cap (or to see each block): the same fix again is its debugging loop going on,
    which the guard defers after its first block (tests/test_fix_guard.py); with it off, each Stop is a
    consequential turn of its own."""
    from pathlib import Path

    rules = Path(project) / ".gate" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    (rules / "writeback.toml").write_text("[fix_guard]\nenabled = false\n", encoding="utf-8")


def doctor_report(gate: Any, *args: str) -> tuple[int, dict[str, Any]]:
    """`gate doctor --json` through the test's CLI runner: its exit status and its report."""
    code, out, err = gate("doctor", "--json", *args)
    assert out, err
    return code, json.loads(out)


def doctor_checks(report: dict[str, Any], check: str, status: str | None = None) -> list[dict[str, Any]]:
    """The report's lines of one check (and one status)."""
    return [c for c in report["checks"] if c["check"] == check and (status is None or c["status"] == status)]


# --- real synchronisation for process tests (no sleeps placing start times or kill points) ---------------------

# The worker side of start_together(): after its imports, a worker says "ready" and waits for "go".
READY_THEN_WAIT = 'import sys as _s; print("ready", flush=True); _s.stdin.readline()\n'


def start_together(procs: list[Any]) -> None:
    """Let workers started with stdin and stdout pipes (running READY_THEN_WAIT) begin at once: wait until every
    one has said "ready", then tell them all "go". A start time on the clock was a guess of how long imports
    take on a loaded machine."""
    for proc in procs:
        line = proc.stdout.readline()
        assert line.strip() == b"ready", (line, proc.stderr.read() if proc.stderr else b"")
    for proc in procs:
        proc.stdin.write(b"go\n")
        proc.stdin.close()
        proc.stdin = None  # closed: communicate() must not flush it again


# A sitecustomize that stops its process (SIGSTOP) just before its N-th write to the file system under the given
# directories: opens for writing, renames, links, removes, truncations, new directories, as Python's audit events
# see them (tantivy's own writes, in Rust, are not seen: test_commit_after_a_writer_died_mid_commit covers those).
# Only the process the test started is stopped (not a child it spawns). N = -1 stops nothing and writes
# the number of such writes to GATE_TEST_WRITES_FILE when the process exits.
_STOP_AT_WRITE = r'''
import os, signal, sys

def _install():
    at = int(os.environ.get("GATE_TEST_STOP_AT", "-2"))
    if at == -2 or os.getppid() != int(os.environ.get("GATE_TEST_PARENT", "0")):
        return
    roots = tuple(p for p in os.environ["GATE_TEST_STOP_UNDER"].split(os.pathsep) if p)
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    count = [0]

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                mode is None and isinstance(flags, int) and bool(flags & writing))
        elif event in ("os.rename", "os.link", "os.remove", "os.truncate", "os.mkdir", "os.rmdir"):
            path, writes = args[0], True
        else:
            return
        if not writes or not isinstance(path, (str, bytes)):
            return
        if not os.path.abspath(os.fsdecode(path)).startswith(roots):
            return
        if count[0] == at:
            os.kill(os.getpid(), signal.SIGSTOP)
        count[0] += 1

    if at == -1:
        import atexit
        report = os.environ["GATE_TEST_WRITES_FILE"]
        atexit.register(lambda: open(report, "w").write(str(count[0])))
        real_exit = os._exit

        def leave(code):  # a hook process leaves by os._exit (gate.hook.entry), past atexit: report first
            with open(report, "w") as handle:
                handle.write(str(count[0]))
            real_exit(code)

        os._exit = leave
    sys.addaudithook(hook)

_install()
'''


def stop_at_write_env(site_dir: os.PathLike[str] | str, under: list[str], at: int) -> dict[str, str]:
    """The environment for a child that stops before its `at`-th write under `under` (see _STOP_AT_WRITE)."""
    from pathlib import Path

    site = Path(site_dir)
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(_STOP_AT_WRITE, encoding="utf-8")
    path = os.pathsep.join([str(site), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]])
    return {**os.environ, "PYTHONPATH": path, "GATE_TEST_STOP_AT": str(at), "GATE_TEST_PARENT": str(os.getpid()),
            "GATE_TEST_STOP_UNDER": os.pathsep.join(under), "GATE_TEST_WRITES_FILE": str(site / "writes"),
            "PYTHONDONTWRITEBYTECODE": "1"}


def writes_of_a_run(command: list[str], site_dir: os.PathLike[str] | str, under: list[str],
                    stdin: bytes = b"") -> int:
    """How many writes under `under` one uninterrupted run of `command` makes (its kill points)."""
    import subprocess
    from pathlib import Path

    env = stop_at_write_env(site_dir, under, -1)
    proc = subprocess.run(command, env=env, input=stdin, capture_output=True, timeout=HANG_S)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return int((Path(site_dir) / "writes").read_text())


def kill_at_write(command: list[str], site_dir: os.PathLike[str] | str, under: list[str], at: int,
                  stdin: bytes = b"") -> int | None:
    """Run `command` until just before its `at`-th write under `under`, and SIGKILL it there. None when it was
    killed at that point; its exit status when it finished first (it made fewer writes this time)."""
    import subprocess

    proc = subprocess.Popen(command, env=stop_at_write_env(site_dir, under, at), stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None
    try:
        proc.stdin.write(stdin)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    _, status = os.waitpid(proc.pid, os.WUNTRACED)  # returns when it stops itself, or ends
    if os.WIFSTOPPED(status):
        os.kill(proc.pid, signal.SIGKILL)
        os.waitpid(proc.pid, 0)
        proc.returncode = -signal.SIGKILL
        return None
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode


def stop_turn(prompt: str, text: str, tools: Any = ()) -> Any:
    """A finished turn for the write-back gate's tests: the prompt, one reply, and its tool calls in order, each
    (name, input) — a result "ok" — or (name, input, result text, is_error)."""
    from gate.session.turn import ToolResult, ToolUse, Turn

    turn = Turn(prompt=prompt, assistant_texts=[text], complete=True)
    for i, (name, tool_input, *result) in enumerate(tools):
        output, error = result if result else ("ok", False)
        turn.tool_uses.append(ToolUse(f"t{i}", name, tool_input, seq=2 * i))
        turn.tool_results.append(ToolResult(f"t{i}", output, error, seq=2 * i + 1))
    return turn


# git in a test's own repositories: a fixed identity, no system config (tests of project identity and worktrees)
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: os.PathLike[str] | str, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **GIT_ENV})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def load_script(name: str) -> Any:
    """scripts/NAME.py as a module (the scripts are no package): its functions, for a test."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
