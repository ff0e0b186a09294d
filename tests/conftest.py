"""Shared fixtures: every test runs with its own GATE_HOME and HOME, and a project directory of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gate.cli import main as gate_main

VENV_BIN = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("gatehome")
    monkeypatch.setenv("GATE_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    for name in list(os.environ):
        if name.startswith("GATE_") and name not in ("GATE_HOME", "GATE_CLAUDE_BIN", "GATE_CLI_CACHE"):
            monkeypatch.delenv(name)
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    for name in ("CODEX_THREAD_ID", "GEMINI_CLI"):  # another agent's shell running the suite (gate/hosts/shell.py)
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def gate(project: Path, capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run `gate ARGS…` in-process against `project`; returns (exit code, stdout, stderr)."""

    def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
        capsys.readouterr()
        argv = [*args]
        if "--project" not in argv and args and args[0] not in ("install", "uninstall"):
            argv += ["--project", str(project)]
        import io

        old = sys.stdin
        sys.stdin = io.StringIO(stdin or "")
        try:
            code = gate_main(argv)
        except SystemExit as exit_:  # argparse refuses bad arguments this way
            code = exit_.code if isinstance(exit_.code, int) else 1
        finally:
            sys.stdin = old
        out, err = capsys.readouterr()
        return code, out, err

    return run


def run_hook(event: dict[str, Any], env: dict[str, str] | None = None, timeout: float = 60) -> tuple[str, int]:
    """The real hook entry point in a fresh process, as Claude Code runs it (the launcher's `-I -S` command)."""
    from gate.install.launcher import hook_argv

    proc = subprocess.run(
        hook_argv(sys.executable),
        input=json.dumps(event).encode(),
        capture_output=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    return proc.stdout.decode(), proc.returncode


@pytest.fixture
def hook() -> Callable[..., tuple[str, int]]:
    return run_hook
