"""Running the real Gemini CLI (`gemini -p`) against the scripted Gemini API server (gemini_server.py).

The pinned CLI comes from $GATE_GEMINI_BIN, else from scripts/install-gemini-cli.sh (cached). Each run gets the
test's own HOME (~/.gemini/settings.json: API-key auth, usage statistics, telemetry and update checks off),
GATE_HOME, GOOGLE_GEMINI_BASE_URL at the server on 127.0.0.1, GEMINI_API_KEY=test, and
GEMINI_CLI_TRUST_WORKSPACE=true: the folder is trusted for the run, so Gemini runs the hooks of its settings
files (it runs none in an untrusted folder). `--approval-mode yolo` unless a test asks for the default mode, in
which a headless run refuses what the policy engine does not allow.

No traffic but 127.0.0.1: the settings turn off what would call out (usage statistics, telemetry, auto update
and its notification), and HTTP(S)_PROXY point at a trap on 127.0.0.1 that records any request a library sends
through a proxy (NO_PROXY keeps the model server direct); the tests assert the trap saw nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

from gemini_server import GeminiServer

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO_ROOT / "scripts" / "install-gemini-cli.sh"
PINNED_VERSION = "0.61.0"
_PASSTHROUGH = ("LANG", "LC_ALL", "TERM", "TMPDIR")

# What the test's user settings hold besides gate's hooks: API-key auth, nothing that calls out.
SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


def locate_gemini() -> Path:
    explicit = os.environ.get("GATE_GEMINI_BIN", "").strip()
    if explicit:
        binary = Path(explicit).expanduser()
        if not binary.is_file():
            raise RuntimeError(f"GATE_GEMINI_BIN={explicit} is not a file")
    else:
        proc = subprocess.run(["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=900,
                              stdin=subprocess.DEVNULL)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            raise RuntimeError(f"{INSTALL_SCRIPT} failed (exit {proc.returncode}); the Gemini e2e tests need the "
                               f"real Gemini CLI {PINNED_VERSION}.\n{proc.stderr.strip()[-3000:]}")
        binary = Path(lines[-1])
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    if out.stdout.strip() != PINNED_VERSION:
        raise RuntimeError(f"{binary} reports {out.stdout.strip()!r}; the suite is pinned to {PINNED_VERSION}")
    return binary


class ProxyTrap:
    """An HTTP proxy on 127.0.0.1 that forwards nothing: it records every request sent to it and refuses it."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._httpd: ThreadingHTTPServer | None = None

    def start(self) -> Self:
        trap = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _refuse(self) -> None:
                trap.seen.append(f"{self.command} {self.path}")
                self.send_response(403)
                self.send_header("content-length", "0")
                self.end_headers()

            do_CONNECT = do_GET = do_POST = do_PUT = do_HEAD = _refuse

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None


@dataclass
class GeminiRun:
    proc: subprocess.CompletedProcess[str]

    @property
    def output(self) -> dict[str, Any]:
        return json.loads(self.proc.stdout[self.proc.stdout.index("{"):])

    @property
    def session_id(self) -> str:
        return str(self.output["session_id"])

    def describe(self) -> str:
        return f"exit {self.proc.returncode}\nstdout:\n{self.proc.stdout[-3000:]}\nstderr:\n{self.proc.stderr[-6000:]}"


class Gemini:
    def __init__(self, binary: Path, project: Path, home: Path, gate_home: Path, server: GeminiServer,
                 path: str, trap: ProxyTrap) -> None:
        self.binary = binary
        self.project = project
        self.home = home
        self.gate_home = gate_home
        self.server = server
        self.path = path
        self.trap = trap
        self.settings_file = home / ".gemini" / "settings.json"
        self.settings_file.parent.mkdir(parents=True, exist_ok=True)
        self.settings_file.write_text(json.dumps(SETTINGS, indent=2) + "\n", encoding="utf-8")

    @property
    def env(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in _PASSTHROUGH if k in os.environ}
        env.update({"HOME": str(self.home), "GATE_HOME": str(self.gate_home), "PATH": self.path,
                    "SHELL": "/bin/bash", "GOOGLE_GEMINI_BASE_URL": self.server.base_url,
                    "GEMINI_API_KEY": "test", "GEMINI_CLI_TRUST_WORKSPACE": "true",
                    "HTTPS_PROXY": self.trap.url, "HTTP_PROXY": self.trap.url, "https_proxy": self.trap.url,
                    "http_proxy": self.trap.url, "NO_PROXY": "127.0.0.1,localhost",
                    "no_proxy": "127.0.0.1,localhost"})
        return env

    def run(self, prompt: str, resume: str | None = None, approval: str = "yolo", timeout: float = 180) -> GeminiRun:
        argv = [str(self.binary), "-p", prompt, "--output-format", "json", "--approval-mode", approval]
        if resume is not None:
            argv += ["--resume", resume]
        proc = subprocess.run(argv, cwd=self.project, env=self.env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        run = GeminiRun(proc)
        assert proc.returncode == 0, run.describe()
        return run
