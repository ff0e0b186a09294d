"""Running the real Claude Code CLI offline, against the scripted model server, in a throwaway project.

The fixtures in conftest.py build a `Claude` per test. It runs:
- `claude -p PROMPT --output-format json` (one prompt per process; `resume=SID` continues a session), or
- `claude -p --input-format stream-json --output-format stream-json --verbose` fed one prompt at a time:
  the next prompt is written only after the previous turn's `result` arrived, because prompts queued while a
  turn runs are merged into one user message (measured on 2.1.332).
Each run returns a `Run`: stdout JSON, per-turn results, the model requests each turn made, the transcript.
Network: the child gets a minimal environment (no proxies, no inherited ANTHROPIC_*), so its only traffic is
to the model server on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_server import JSON, ModelServer, is_main_loop, request_text

DEFAULT_TIMEOUT = 120.0
DEFAULT_ALLOWED_TOOLS = ("Bash", "Read", "Edit", "Write")

# Variables passed through from the test process (everything else is dropped on purpose).
_PASSTHROUGH = ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "SYSTEMROOT")


@dataclass(frozen=True)
class E2EDirs:
    """A test's private directories: the project (git-initialised), HOME, GATE_HOME, all under root."""

    root: Path
    project: Path
    home: Path
    gate_home: Path


@dataclass
class Turn:
    """One user prompt and what followed it, up to the CLI's `result`."""

    prompt: str
    result: JSON | None
    requests: list[JSON]  # bodies of every POST /v1/messages made during the turn (main loop and side queries)
    seconds: float

    @property
    def main_requests(self) -> list[JSON]:
        return [b for b in self.requests if is_main_loop(b)]

    def shown(self) -> str:
        """Everything the model was shown during this turn, as one text (all requests, flattened)."""
        return "\n".join(request_text(b) for b in self.requests)


@dataclass
class Run:
    """One CLI process."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    home: Path
    turns: list[Turn] = field(default_factory=list)
    events: list[JSON] = field(default_factory=list)  # stream-json lines (stream mode only)

    @property
    def result(self) -> JSON:
        """The last turn's result object (`--output-format json` stdout, or the last stream `result`)."""
        for turn in reversed(self.turns):
            if turn.result is not None:
                return turn.result
        raise AssertionError(f"no result from the CLI\nstdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}")

    @property
    def session_id(self) -> str:
        return str(self.result["session_id"])

    @property
    def requests(self) -> list[JSON]:
        return [b for t in self.turns for b in t.requests]

    @property
    def main_requests(self) -> list[JSON]:
        return [b for b in self.requests if is_main_loop(b)]

    @property
    def transcript_path(self) -> Path:
        return transcript_path(self.home, self.session_id)

    def transcript(self) -> list[JSON]:
        return read_jsonl(self.transcript_path)

    def check(self) -> Run:
        """Assert the process exited cleanly and every turn reported success; return self for chaining."""
        assert self.returncode == 0, f"claude exited {self.returncode}\n{self.describe()}"
        for turn in self.turns:
            assert turn.result is not None, f"turn {turn.prompt!r} got no result\n{self.describe()}"
            assert not turn.result.get("is_error"), f"turn {turn.prompt!r} failed: {turn.result}\n{self.describe()}"
        return self

    def describe(self) -> str:
        return (
            f"argv: {self.argv}\nwall: {self.seconds:.2f}s\n"
            f"stdout (tail): {self.stdout[-3000:]}\nstderr (tail): {self.stderr[-3000:]}"
        )


# Claude Code's own loop guard (2.1.332): after 8 hook-caused continuations, the 9th consecutive Stop block is
# overridden and the turn ends, with a transcript line {"type":"system","subtype":"informational","content":
# "A hook blocked the turn from ending 9 consecutive times—overriding and ending turn. …"}.
STOP_OVERRIDE_TEXT = "consecutive times\u2014overriding and ending turn"


def stop_hook_overrides(transcript: list[JSON]) -> list[JSON]:
    """Transcript lines where Claude Code overrode a blocking Stop hook."""
    return [
        line
        for line in transcript
        if line.get("type") == "system" and STOP_OVERRIDE_TEXT in str(line.get("content", ""))
    ]


# How the model reads a Stop hook's block (2.1.332): `{"decision":"block"}` as "Stop hook feedback:\n<reason>" (and
# again in "Stop hook blocking error from command: …"); the Stop's additionalContext, which gate answers
# (gate.hook.claude_code_stop), as "Stop hook additional context: <reason>", once.
STOP_CONTEXT = "Stop hook additional context: "


def stop_feedback(transcript: list[JSON]) -> list[str]:
    """Every Stop hook block the model got, in order: "Stop hook feedback:" (isMeta user lines, a
    `decision: block`) and a Stop hook's additionalContext (attachment lines, gate's block), each as the model
    reads it."""
    out: list[str] = []
    for line in transcript:
        attachment = line.get("attachment") if line.get("type") == "attachment" else None
        if isinstance(attachment, dict) and attachment.get("type") == "hook_additional_context" \
                and attachment.get("hookEvent") == "Stop":
            out.append(STOP_CONTEXT + "\n".join(str(c) for c in attachment.get("content") or []))
            continue
        if line.get("type") != "user" or not line.get("isMeta"):
            continue
        content = line.get("message", {}).get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        if "Stop hook feedback:" in text:
            out.append(text)
    return out


def hook_contexts(transcript: list[JSON], event: str | None = None) -> list[str]:
    """additionalContext texts the transcript recorded (attachment lines of type hook_additional_context)."""
    out: list[str] = []
    for line in transcript:
        attachment = line.get("attachment") if line.get("type") == "attachment" else None
        if not isinstance(attachment, dict) or attachment.get("type") != "hook_additional_context":
            continue
        if event is not None and attachment.get("hookEvent") != event:
            continue
        content = attachment.get("content")
        out.extend(str(c) for c in content) if isinstance(content, list) else out.append(str(content))
    return out


def read_jsonl(path: Path) -> list[JSON]:
    if not path.exists():
        return []
    out: list[JSON] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line:
            out.append(json.loads(line))
    return out


def transcript_path(home: Path, session_id: str) -> Path:
    """~/.claude/projects/<mangled cwd>/<session>.jsonl, found by globbing (the CLI owns the mangling)."""
    hits = sorted((home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
    if not hits:
        raise AssertionError(f"no transcript for session {session_id} under {home}/.claude/projects")
    return hits[0]


def offline_env(home: Path, server: ModelServer, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: os.environ[k] for k in _PASSTHROUGH if k in os.environ}
    env.update(
        {
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-e2e-dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
    )
    if extra:
        env.update(extra)
    return env


class Claude:
    """The CLI bound to one temp project, one HOME and one model server."""

    def __init__(
        self,
        binary: Path,
        project: Path,
        home: Path,
        server: ModelServer,
        env_extra: dict[str, str] | None = None,
        timings: list[tuple[str, float]] | None = None,
    ) -> None:
        self.binary = binary
        self.project = project
        self.home = home
        self.server = server
        self.env_extra: dict[str, str] = dict(env_extra or {})
        self.timings = timings if timings is not None else []
        self.runs: list[Run] = []

    @property
    def env(self) -> dict[str, str]:
        return offline_env(self.home, self.server, self.env_extra)

    def _argv(
        self,
        head: Sequence[str],
        resume: str | None,
        allowed_tools: Iterable[str] | None,
        args: Sequence[str],
    ) -> list[str]:
        argv = [str(self.binary), *head]
        if resume:
            argv += ["--resume", resume]
        tools = list(DEFAULT_ALLOWED_TOOLS if allowed_tools is None else allowed_tools)
        if tools:
            argv += ["--allowedTools", ",".join(tools)]
        return argv + list(args)

    def _record(self, run: Run, label: str) -> Run:
        self.runs.append(run)
        self.timings.append((label, run.seconds))
        return run

    def cli(self, *args: str, timeout: float = DEFAULT_TIMEOUT) -> subprocess.CompletedProcess[str]:
        """Any other `claude …` subcommand (e.g. `plugin validate DIR`), in the project, offline env."""
        started = time.monotonic()
        proc = subprocess.run(
            [str(self.binary), *args],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        self.timings.append((_short(" ".join(args)), time.monotonic() - started))
        return proc

    # -- one prompt per process ---------------------------------------------------------------------------
    def run(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        args: Sequence[str] = (),
        allowed_tools: Iterable[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        check: bool = True,
    ) -> Run:
        """`claude -p PROMPT --output-format json` in the project."""
        argv = self._argv(["-p", prompt, "--output-format", "json"], resume, allowed_tools, args)
        mark = self.server.mark()
        started = time.monotonic()
        proc = subprocess.Popen(
            argv,
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            stdout, stderr = proc.communicate()
            raise AssertionError(
                f"claude timed out after {timeout}s\nargv: {argv}\nstdout: {stdout[-3000:]}\nstderr: {stderr[-3000:]}"
            ) from None
        seconds = time.monotonic() - started
        result: JSON | None = None
        events: list[JSON] = []
        try:
            parsed: Any = json.loads(stdout) if stdout.strip() else None
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            result = parsed
        elif isinstance(parsed, list):  # with --verbose, `json` output is the list of every event
            events = [e for e in parsed if isinstance(e, dict)]
            result = next((e for e in reversed(events) if e.get("type") == "result"), None)
        requests = self.server.bodies_since(mark)
        run = Run(argv, proc.returncode, stdout, stderr, seconds, self.home, events=events)
        run.turns.append(Turn(prompt, result, requests, seconds))
        self._record(run, f"-p {_short(prompt)}")
        return run.check() if check else run

    # -- several prompts in one process -------------------------------------------------------------------
    def session(
        self,
        prompts: Sequence[str],
        *,
        resume: str | None = None,
        args: Sequence[str] = (),
        allowed_tools: Iterable[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        check: bool = True,
    ) -> Run:
        """One process, prompts fed one at a time over `--input-format stream-json`."""
        assert prompts, "a session needs at least one prompt"
        head = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        argv = self._argv(head, resume, allowed_tools, args)
        deadline = time.monotonic() + timeout
        started = time.monotonic()
        stderr_file = self.home / f".claude-stderr-{len(self.runs)}.txt"
        with stderr_file.open("w+", encoding="utf-8") as err:
            proc = subprocess.Popen(
                argv,
                cwd=self.project,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                bufsize=1,
                start_new_session=True,
            )
            assert proc.stdin is not None and proc.stdout is not None
            lines: queue.Queue[str | None] = queue.Queue()
            reader = threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True)
            reader.start()
            run = Run(argv, -1, "", "", 0.0, self.home)
            raw: list[str] = []
            try:
                for prompt in prompts:
                    turn_start = time.monotonic()
                    mark = self.server.mark()
                    message = {"type": "user", "message": {"role": "user", "content": prompt}}
                    proc.stdin.write(json.dumps(message) + "\n")
                    proc.stdin.flush()
                    result = _await_result(lines, raw, run.events, deadline)
                    requests = self.server.bodies_since(mark)
                    run.turns.append(Turn(prompt, result, requests, time.monotonic() - turn_start))
                    if result is None:  # the process ended early
                        break
                proc.stdin.close()
                proc.wait(timeout=max(1.0, deadline - time.monotonic()))
                reader.join(timeout=5)
                _drain(lines, raw, run.events)
            except (subprocess.TimeoutExpired, TimeoutError):
                _kill_group(proc)
                err.seek(0)
                raise AssertionError(
                    f"claude session timed out after {timeout}s\nargv: {argv}\n"
                    f"stdout: {''.join(raw)[-3000:]}\nstderr: {err.read()[-3000:]}"
                ) from None
            finally:
                if proc.poll() is None:
                    _kill_group(proc)
            err.seek(0)
            run.stderr = err.read()
        stderr_file.unlink(missing_ok=True)
        run.stdout = "".join(raw)
        run.returncode = proc.returncode
        run.seconds = time.monotonic() - started
        self._record(run, f"session x{len(prompts)} {_short(prompts[0])}")
        return run.check() if check else run


def _short(text: str, width: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _pump(stream: Any, lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def _parse(line: str, events: list[JSON]) -> JSON | None:
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if isinstance(event, dict):
        events.append(event)
        return event
    return None


def _await_result(lines: queue.Queue[str | None], raw: list[str], events: list[JSON], deadline: float) -> JSON | None:
    """Read stream-json lines until the next `result` event; None when stdout closed first."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            raise TimeoutError from None
        if line is None:
            return None
        raw.append(line)
        event = _parse(line, events)
        if event is not None and event.get("type") == "result":
            return event


def _drain(lines: queue.Queue[str | None], raw: list[str], events: list[JSON]) -> None:
    while True:
        try:
            line = lines.get_nowait()
        except queue.Empty:
            return
        if line is None:
            return
        raw.append(line)
        _parse(line, events)


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    """Kill the CLI and the hooks it started (it runs in its own session, so its group is only ours)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def write_settings(project: Path, settings: JSON, name: str = "settings.json") -> Path:
    path = project / ".claude" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return path


def command_hooks(command: str, events: Iterable[str], timeout: int | None = None) -> JSON:
    """A settings `hooks` block that runs one command for each event (no matcher, or "*" for tool events)."""
    entry: JSON = {"type": "command", "command": command}
    if timeout is not None:
        entry["timeout"] = timeout
    hooks: JSON = {}
    for event in events:
        group: JSON = {"hooks": [entry]}
        if event in ("PreToolUse", "PostToolUse"):
            group["matcher"] = "*"
        hooks[event] = [group]
    return {"hooks": hooks}


class GateCli:
    """The real `gate` console script (next to the test interpreter), run in the test's project and GATE_HOME."""

    def __init__(self, binary: Path, project: Path, gate_home: Path, home: Path) -> None:
        self.binary = binary
        self.project = project
        self.gate_home = gate_home
        self.home = home

    @property
    def env(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in _PASSTHROUGH if k in os.environ}
        env.update({"HOME": str(self.home), "GATE_HOME": str(self.gate_home)})
        return env

    def run(self, *args: str, cwd: Path | None = None, check: bool = True, stdin: str | None = None) -> Any:
        proc = subprocess.run(
            [str(self.binary), *args],
            cwd=cwd or self.project,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"gate {' '.join(args)} exited {proc.returncode}\nstdout: {proc.stdout[-2000:]}\n"
                f"stderr: {proc.stderr[-2000:]}"
            )
        return proc

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "--json").stdout)

    def remember(self, title: str, *args: str) -> str:
        return str(self.json("remember", title, *args)["id"])

    def search(self, query: str) -> JSON:
        result: JSON = self.json("search", query)
        return result

    @property
    def audit_path(self) -> Path:
        return self.gate_home / "state" / "audit.jsonl"

    def audit(self) -> list[JSON]:
        return read_jsonl(self.audit_path)

    @property
    def error_log(self) -> Path:
        return self.gate_home / "state" / "log" / "errors.log"


def filled_remember_command(shown: str, title: str, *, body: str, cues: str) -> str:
    """The exact `gate remember` line a MEMORY CHECK (block or reminder) showed, its placeholders filled in as an
    agent would: the scripted agent runs it, so a test proves that command works in the Bash tool as it is."""
    line = next((x for x in shown.splitlines() if " remember " in x and "<one-line fact>" in x), None)
    assert line is not None, f"no remember command in the MEMORY CHECK:\n{shown}"
    command = line.strip().replace('"<one-line fact>"', shlex.quote(title))
    command = command.replace('"<why, where, how to verify>"', shlex.quote(body))
    command = command.replace('"<how it would be asked>"', shlex.quote(cues))
    command = re.sub(r"\s--link\s+\S+:<ID>", "", command)  # nothing to link to in a fresh store
    assert "<" not in command, f"unfilled placeholder in {command!r}"
    return command
