"""Fixtures for the end-to-end suite: the real Claude Code CLI, a scripted model server, a throwaway project.

The CLI comes from $GATE_CLAUDE_BIN, else from scripts/install-claude-cli.sh (pinned version, cached). When it
cannot be had the tests ERROR with the reason — they are never skipped: run `pytest -m "not e2e"` to leave
them out on purpose.

Every test gets: a git-initialised project dir, its own HOME (so ~/.claude and ~/.claude.json are private to
the test) and GATE_HOME (all gate state), a model server on 127.0.0.1, and `claude`, which runs the CLI there.
Wall times of each test and of each CLI process are printed at the end of the run (and recorded as
user_properties, so JUnit XML carries them too).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_harness import Claude, E2EDirs, GateCli
from model_server import ModelServer, Reply

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO_ROOT / "scripts" / "install-claude-cli.sh"
PINNED_VERSION = "2.1.332"
INSTALL_TIMEOUT = 900


def _version_of(binary: Path) -> str:
    try:
        out = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise RuntimeError(f"cannot run {binary} --version: {error}") from error
    if out.returncode != 0:
        raise RuntimeError(f"{binary} --version exited {out.returncode}: {out.stderr.strip()[-500:]}")
    return out.stdout.strip()


def _locate_claude() -> Path:
    explicit = os.environ.get("GATE_CLAUDE_BIN", "").strip()
    if explicit:
        binary = Path(explicit).expanduser()
        if not binary.is_file():
            raise RuntimeError(f"GATE_CLAUDE_BIN={explicit} is not a file")
    else:
        try:
            proc = subprocess.run(
                ["bash", str(INSTALL_SCRIPT)],
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise RuntimeError(f"{INSTALL_SCRIPT} could not run: {error}") from error
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            raise RuntimeError(
                f"{INSTALL_SCRIPT} failed (exit {proc.returncode}); the e2e suite needs the real "
                f"Claude Code CLI {PINNED_VERSION} (set GATE_CLAUDE_BIN, or make npm and its registry "
                "reachable).\n"
                f"{proc.stderr.strip()[-3000:]}"
            )
        binary = Path(lines[-1])
    version = _version_of(binary)
    if not version.startswith(PINNED_VERSION):
        # A different CLI would test a different hook protocol; say so rather than pass by accident.
        raise RuntimeError(f"{binary} reports {version!r}; the suite is pinned to {PINNED_VERSION}")
    return binary


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The pinned CLI. Errors (never skips) when it cannot be had; pytest caches the error for the session."""
    try:
        return _locate_claude()
    except RuntimeError as error:
        pytest.fail(f"e2e: the Claude Code CLI is not available: {error}", pytrace=False)


@pytest.fixture(scope="session")
def gate_python() -> Path:
    """The interpreter of the venv that runs the tests (it has `gate` installed)."""
    return Path(sys.executable)


@pytest.fixture(scope="session")
def gate_bin() -> Path:
    """The `gate` console script next to the test interpreter."""
    return Path(sys.executable).parent / ("gate.exe" if os.name == "nt" else "gate")


@pytest.fixture
def e2e_dirs(tmp_path: Path) -> E2EDirs:
    root = tmp_path.resolve()
    dirs = E2EDirs(root, root / "project", root / "home", root / "gate-home")
    for path in (dirs.project, dirs.home, dirs.gate_home):
        path.mkdir()
    subprocess.run(["git", "init", "-q", str(dirs.project)], check=True, stdin=subprocess.DEVNULL)
    return dirs


@pytest.fixture
def model_server(e2e_dirs: E2EDirs) -> Iterator[ModelServer]:
    server = ModelServer(default=Reply.text("OK."), log_file=e2e_dirs.root / "model-requests.jsonl")
    with server:
        yield server
    assert not server.errors, f"the model server hit errors: {server.errors}"


@pytest.fixture
def claude(
    claude_bin: Path, e2e_dirs: E2EDirs, model_server: ModelServer, request: pytest.FixtureRequest
) -> Iterator[Claude]:
    timings: list[tuple[str, float]] = []
    # Filled while the test runs, so the call-phase report already carries every CLI run's wall time.
    request.node.user_properties.append(("claude_runs", timings))
    runner = Claude(
        claude_bin,
        e2e_dirs.project,
        e2e_dirs.home,
        model_server,
        env_extra={"GATE_HOME": str(e2e_dirs.gate_home)},
        timings=timings,
    )
    yield runner


# --- wall-time report ---------------------------------------------------------------------------------------

_REPORTS: list[tuple[str, str, float, list[tuple[str, float]]]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call" and not (report.when == "setup" and report.outcome != "passed"):
        return
    if "e2e" not in report.keywords:
        return
    runs: list[tuple[str, float]] = []
    for key, value in report.user_properties:
        if key == "claude_runs":
            runs = list(value)
    _REPORTS.append((report.nodeid, report.outcome, report.duration, runs))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _REPORTS:
        return
    terminalreporter.section("e2e wall times")
    for nodeid, outcome, duration, runs in _REPORTS:
        terminalreporter.write_line(f"{duration:7.2f}s  {outcome:7}  {nodeid}")
        for label, seconds in runs:
            terminalreporter.write_line(f"           {seconds:6.2f}s  claude {label}")


@pytest.fixture
def gate(gate_bin: Path, e2e_dirs: E2EDirs) -> GateCli:
    """`gate …` in the test's project, with the same HOME and GATE_HOME the CLI's hooks see."""
    if not gate_bin.is_file():
        pytest.fail(f"no gate console script at {gate_bin}: install the repo into the test venv", pytrace=False)
    return GateCli(gate_bin, e2e_dirs.project, e2e_dirs.gate_home, e2e_dirs.home)
