"""Running the real Codex CLI (`codex exec`) against the scripted Responses API server (responses_server.py).

The pinned CLI comes from $GATE_CODEX_BIN, else from scripts/install-codex-cli.sh (cached). Each run gets the
test's own HOME and CODEX_HOME (config.toml: a model provider "scripted" at http://127.0.0.1:PORT/v1,
wire_api "responses", no retries), GATE_HOME, and `codex exec --trust --dangerously-bypass-hook-trust`: the
project is trusted and gate's hooks run without the one-time review a user gives them in the TUI (/hooks).
A later prompt of the same session is `codex exec resume SESSION_ID PROMPT`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from responses_server import ResponsesServer

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO_ROOT / "scripts" / "install-codex-cli.sh"
PINNED_VERSION = "0.171.0"
# A model Codex 0.171 knows (its bundled catalogue): it offers apply_patch as a freeform tool; for a model it
# does not know, it falls back to metadata without apply_patch.
MODEL = "gpt-5.5"
_PASSTHROUGH = ("LANG", "LC_ALL", "TERM", "TMPDIR")


def locate_codex() -> Path:
    explicit = os.environ.get("GATE_CODEX_BIN", "").strip()
    if explicit:
        binary = Path(explicit).expanduser()
        if not binary.is_file():
            raise RuntimeError(f"GATE_CODEX_BIN={explicit} is not a file")
    else:
        proc = subprocess.run(["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=900,
                              stdin=subprocess.DEVNULL)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            raise RuntimeError(f"{INSTALL_SCRIPT} failed (exit {proc.returncode}); the Codex e2e tests need the "
                               f"real Codex CLI {PINNED_VERSION}.\n{proc.stderr.strip()[-3000:]}")
        binary = Path(lines[-1])
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    if PINNED_VERSION not in out.stdout:
        raise RuntimeError(f"{binary} reports {out.stdout.strip()!r}; the suite is pinned to {PINNED_VERSION}")
    return binary


@dataclass
class CodexRun:
    proc: subprocess.CompletedProcess[str]

    @property
    def session_id(self) -> str:
        found = re.search(r"^session id: (\S+)$", self.proc.stderr, re.MULTILINE)
        assert found, f"no session id in codex's output:\n{self.describe()}"
        return found.group(1)

    def describe(self) -> str:
        return f"exit {self.proc.returncode}\nstdout:\n{self.proc.stdout[-3000:]}\nstderr:\n{self.proc.stderr[-6000:]}"


class Codex:
    def __init__(self, binary: Path, project: Path, home: Path, gate_home: Path, server: ResponsesServer,
                 path: str) -> None:
        self.binary = binary
        self.project = project
        self.home = home
        self.gate_home = gate_home
        self.server = server
        self.path = path
        self.codex_home = home / ".codex"
        self.codex_home.mkdir(parents=True, exist_ok=True)
        self.configure()

    def configure(self, top_level: str = "") -> None:
        """config.toml: the scripted provider, and `top_level` settings (e.g. model_auto_compact_token_limit)."""
        (self.codex_home / "config.toml").write_text(
            f'model = "{MODEL}"\nmodel_provider = "scripted"\n{top_level}\n[model_providers.scripted]\n'
            f'name = "scripted"\nbase_url = "{self.server.base_url}"\nwire_api = "responses"\n'
            "request_max_retries = 0\nstream_max_retries = 0\n",
            encoding="utf-8",
        )

    @property
    def env(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in _PASSTHROUGH if k in os.environ}
        env.update({"HOME": str(self.home), "CODEX_HOME": str(self.codex_home), "GATE_HOME": str(self.gate_home),
                    "PATH": self.path, "SHELL": "/bin/bash"})
        return env

    def exec(self, prompt: str, resume: str | None = None, timeout: float = 180) -> CodexRun:
        argv = [str(self.binary), "exec"]
        if resume is not None:
            argv += ["resume", resume]
        argv += ["--skip-git-repo-check", "--trust", "--dangerously-bypass-hook-trust",
                 "--sandbox", "danger-full-access", prompt]
        if resume is not None:  # `exec resume` takes no --sandbox / --trust of its own in some builds
            argv = [str(self.binary), "exec", "--skip-git-repo-check", "--trust", "--dangerously-bypass-hook-trust",
                    "--sandbox", "danger-full-access", "resume", resume, prompt]
        proc = subprocess.run(argv, cwd=self.project, env=self.env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        run = CodexRun(proc)
        assert proc.returncode == 0, run.describe()
        return run


def rollout_items(codex_home: Path, session_id: str) -> list[dict]:
    """The rollout JSONL Codex wrote for a session (its transcript)."""
    [path] = [p for p in (codex_home / "sessions").rglob(f"rollout-*{session_id}.jsonl")]
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
