"""What `gate doctor` looks at: the wiring in every settings file and the plugin, each hook run once for real,
the store, the config, the rules, and other memory tools that compete with gate. It informs; it changes nothing
(except starting the plugin's first-use setup, which running its hook does by design).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gate.install import files, jsonedit, wiring
from gate.paths import ProjectPaths, error_log_file

PLUGIN_NAME = "memory-gate"
PLUGIN_COMMAND = '/bin/sh "${CLAUDE_PLUGIN_ROOT}/hooks/run"'
# Names under which other memory tools show up in hook commands, plugin ids and MCP server names.
_MEMORY_WORDS = re.compile(
    r"mem0|memor(y|ies)|\bmem\b|memento|remember|supermemory|letta|graphiti|\bzep\b|cipher", re.IGNORECASE
)
_TRUE_ENV = {"1", "true", "yes", "on"}


@dataclass
class Check:
    check: str
    status: str  # ok | info | warn | fail
    message: str
    hint: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Wired:
    """One command wired for one event, and where."""

    event: str
    command: str
    source: str  # a settings file path, or "plugin memory-gate@MARKET"
    timeout: int
    env: dict[str, str] = field(default_factory=dict)  # what Claude Code adds for plugin hooks
    matcher: str | None = None


@dataclass
class Settings:
    """The settings files Claude Code merges for this project, parsed (None: missing or unreadable)."""

    paths: dict[str, Path]
    data: dict[str, Any | None]
    errors: dict[str, str]

    @classmethod
    def read(cls, root: Path) -> Settings:
        paths = files.all_settings_paths(root)
        data: dict[str, Any | None] = {}
        errors: dict[str, str] = {}
        for scope, path in paths.items():
            data[scope] = None
            try:
                text = files.read_text(path)
            except Exception as error:  # not UTF-8: reported, not fatal
                errors[scope] = str(error)
                continue
            if text is None or not text.strip():
                continue
            try:
                data[scope] = jsonedit.loads_strict(text.removeprefix("\ufeff"))
            except jsonedit.JSONSyntaxError as error:
                errors[scope] = str(error)
        return cls(paths, data, errors)

    def merged(self, key: str) -> Any:
        """A top-level value as Claude Code resolves it: local over project over user."""
        value = None
        for scope in ("user", "project", "local"):
            doc = self.data.get(scope)
            if isinstance(doc, dict) and key in doc:
                value = doc[key]
        return value

    def enabled_plugins(self) -> dict[str, bool]:
        enabled: dict[str, bool] = {}
        for scope in ("user", "project", "local"):
            doc = self.data.get(scope)
            plugins = doc.get("enabledPlugins") if isinstance(doc, dict) else None
            if isinstance(plugins, dict):
                enabled.update({str(k): bool(v) for k, v in plugins.items()})
        return enabled


# --- wiring -----------------------------------------------------------------------------------------------------


def _installed_plugin(plugin_id: str, root: Path) -> dict[str, Any] | None:
    """The install record of a plugin for this project (Claude Code's installed_plugins.json, version 2)."""
    registry = files.claude_config_dir() / "plugins" / "installed_plugins.json"
    try:
        records = json.loads(registry.read_text(encoding="utf-8")).get("plugins", {}).get(plugin_id, [])
    except (OSError, ValueError, AttributeError):
        return None
    best = None
    for record in records if isinstance(records, list) else []:
        if not isinstance(record, dict):
            continue
        if record.get("scope") == "user" or record.get("projectPath") == str(root):
            best = record
    return best


def _directory_plugin_root(market: str, name: str) -> Path | None:
    """Claude Code 2.1.332 runs a plugin of a local-directory marketplace from that directory, not from its
    cache copy; the launcher stamps the root it set up from, so the doctor must use the same root."""
    known = files.claude_config_dir() / "plugins" / "known_marketplaces.json"
    try:
        source = json.loads(known.read_text(encoding="utf-8"))[market]["source"]
        if source.get("source") != "directory":
            return None
        directory = Path(source["path"])
        catalog = json.loads((directory / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
        entry = next(p for p in catalog["plugins"] if p.get("name") == name)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, StopIteration):
        return None
    relative = entry.get("source")
    if not isinstance(relative, str):
        return None
    root = (directory / relative).resolve()
    return root if (root / "hooks" / "run").is_file() else None


def plugin_wiring(settings: Settings, root: Path) -> tuple[list[Wired], list[Check]]:
    wired: list[Wired] = []
    checks: list[Check] = []
    for plugin_id, enabled in settings.enabled_plugins().items():
        name, _, market = plugin_id.partition("@")
        if name != PLUGIN_NAME or not enabled:
            continue
        record = _installed_plugin(plugin_id, root)
        install_path = Path(record["installPath"]) if record and record.get("installPath") else None
        if install_path is None or not (install_path / "hooks" / "hooks.json").is_file():
            checks.append(
                Check(
                    "plugin",
                    "fail",
                    f"plugin {plugin_id} is enabled but not installed where Claude Code keeps plugins",
                    f"claude plugin install {plugin_id}",
                )
            )
            continue
        data_dir = files.claude_config_dir() / "plugins" / "data" / re.sub(r"[^A-Za-z0-9_-]", "-", f"{name}-{market}")
        root_used = _directory_plugin_root(market, name) or install_path
        env = {"CLAUDE_PLUGIN_ROOT": str(root_used), "CLAUDE_PLUGIN_DATA": str(data_dir)}
        try:
            hooks = json.loads((install_path / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
        except (OSError, ValueError, KeyError) as error:
            checks.append(Check("plugin", "fail", f"plugin {plugin_id}: unreadable hooks.json ({error})"))
            continue
        for event, groups in hooks.items():
            for group in groups:
                for entry in group.get("hooks", []):
                    wired.append(
                        Wired(
                            event,
                            entry["command"],
                            f"plugin {plugin_id}",
                            int(entry.get("timeout", 60)),
                            env,
                            group.get("matcher"),
                        )
                    )
        ready = not _plugin_not_ready(env)
        checks.append(
            Check(
                "plugin",
                "ok" if ready else "warn",
                f"plugin {plugin_id} {record.get('version', '')} installed, runs from {root_used}"
                + ("" if ready else "; its Python environment is not set up yet (first use creates it)"),
                None if ready else f"progress: {data_dir / 'setup.log'}",
                {"install_path": str(install_path), "data_dir": str(data_dir), "ready": ready},
            )
        )
    return wired, checks


def settings_wiring(settings: Settings) -> tuple[list[Wired], list[Check]]:
    wired: list[Wired] = []
    checks: list[Check] = []
    for scope, path in settings.paths.items():
        if scope in settings.errors:
            checks.append(
                Check(
                    "settings",
                    "fail",
                    f"{path} ({scope}) is not valid: {settings.errors[scope]}; Claude Code ignores the whole file",
                    f"fix it (python3 -m json.tool {path} shows where)",
                )
            )
            continue
        data = settings.data.get(scope)
        entries = wiring.find_gate_entries(data) if data is not None else []
        for entry in entries:
            spec = next((s for s in wiring.EVENTS if s.event == entry.event), None)
            hook = entry.group["hooks"][entry.hook_index]
            timeout = hook.get("timeout") if isinstance(hook.get("timeout"), int) else (spec.timeout if spec else 60)
            wired.append(Wired(entry.event, entry.command, str(path), timeout, {}, entry.group.get("matcher")))
        if entries:
            events = sorted({e.event for e in entries}, key=_event_order)
            checks.append(Check("settings", "ok", f"{path} ({scope}) wires {', '.join(events)}"))
    return wired, checks


def _event_order(event: str) -> int:
    return wiring.EVENT_NAMES.index(event) if event in wiring.EVENT_NAMES else len(wiring.EVENT_NAMES)


def coverage(wired: list[Wired]) -> list[Check]:
    checks: list[Check] = []
    if not wired:
        return [
            Check(
                "wiring",
                "fail",
                "gate is not wired into Claude Code for this project: no settings file or enabled plugin runs it",
                "run `gate install` (or install the plugin: claude plugin install memory-gate@memory-gate)",
            )
        ]
    events = {w.event for w in wired}
    missing = [e for e in wiring.EVENT_NAMES if e not in events]
    if missing:
        checks.append(
            Check(
                "wiring", "fail", f"not wired: {', '.join(missing)}", "run `gate install` again to rewire every event"
            )
        )
    else:
        checks.append(Check("wiring", "ok", f"every event is wired: {', '.join(wiring.EVENT_NAMES)}"))
    for spec in wiring.EVENTS:
        # Claude Code runs an identical command string once; different ones all run.
        commands = {(w.command, tuple(sorted(w.env.items()))) for w in wired if w.event == spec.event}
        if len(commands) > 1:
            sources = sorted({w.source for w in wired if w.event == spec.event})
            checks.append(
                Check(
                    "wiring",
                    "warn",
                    f"{spec.event} runs gate {len(commands)} times per event (from {'; '.join(sources)})",
                    "keep one: `gate uninstall --scope …` or disable the plugin",
                )
            )
    for w in wired:
        if w.command == PLUGIN_COMMAND or w.env:
            continue
        python = wiring.interpreter_of(w.command)
        if python is None or not (Path(python).is_file() and os.access(python, os.X_OK)):
            checks.append(
                Check(
                    "wiring",
                    "fail",
                    f"{w.event} in {w.source} runs {python or w.command!r}, which does not exist",
                    "run `gate install` again from the environment gate is installed in",
                )
            )
    return _dedupe(checks)


def _dedupe(checks: list[Check]) -> list[Check]:
    seen: set[tuple[str, str]] = set()
    unique = []
    for check in checks:
        if (check.status, check.message) not in seen:
            seen.add((check.status, check.message))
            unique.append(check)
    return unique


# --- running each hook ------------------------------------------------------------------------------------------

SYNTHETIC: dict[str, dict[str, Any]] = {
    "SessionStart": {"source": "startup"},
    "UserPromptSubmit": {
        "prompt": "gate doctor: a synthetic prompt to time the recall hook",
        "permission_mode": "default",
    },
    "PreToolUse": {"tool_name": "Read", "tool_input": {"file_path": "README.md"}, "tool_use_id": "toolu_gate_doctor"},
    "Stop": {"stop_hook_active": False, "last_assistant_message": ""},
    "PreCompact": {"trigger": "manual", "custom_instructions": ""},
    "SubagentStop": {"agent_id": "gatedoctor", "agent_type": "general-purpose", "stop_hook_active": False},
}


def _error_log_size() -> int:
    try:
        return os.stat(error_log_file()).st_size
    except OSError:
        return 0


def _new_errors(since: int) -> list[str]:
    try:
        with open(error_log_file(), "rb") as handle:
            handle.seek(since)
            return [line.decode("utf-8", "replace").strip() for line in handle if line.strip()]
    except OSError:
        return []


def _valid_answer(event: str, stdout: str) -> str | None:
    """Why an answer is unacceptable for the event, or None when it is fine."""
    text = stdout.strip()
    if not text:
        return None
    try:
        answer = json.loads(text)
    except ValueError:
        return "stdout is not one JSON object (Claude Code would pass it to the model as raw text)"
    if not isinstance(answer, dict):
        return "stdout is JSON but not an object"
    if event in ("UserPromptSubmit", "PreCompact", "SubagentStop") and answer.get("decision") == "block":
        return f"it blocks {event}, which gate must never do"
    specific = answer.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("hookEventName") not in (None, event):
        return f"hookSpecificOutput names {specific.get('hookEventName')!r}"
    return None


def run_hooks(wired: list[Wired], root: Path) -> list[Check]:
    """Run each distinct wired command once per event with a synthetic event; whole-process latency."""
    session = f"gate-doctor-{uuid.uuid4().hex[:12]}"
    checks: list[Check] = []
    seen: set[tuple[str, str, tuple[tuple[str, str], ...]]] = set()
    for w in sorted(wired, key=lambda w: _event_order(w.event)):
        key = (w.event, w.command, tuple(sorted(w.env.items())))
        if key in seen or w.event not in SYNTHETIC:
            continue
        seen.add(key)
        event = {
            "session_id": session,
            "transcript_path": str(root / f".{session}.jsonl"),  # never created: the no-transcript path
            "cwd": str(root),
            "hook_event_name": w.event,
            **SYNTHETIC[w.event],
        }
        # GATE_DOCTOR=1 tags the audit records as synthetic, so `gate stats` leaves them out.
        env = {**os.environ, **w.env, "GATE_DOCTOR": "1", "CLAUDE_PROJECT_DIR": str(root), "CLAUDECODE": "1"}
        env["CLAUDE_CODE_SESSION_ID"] = session
        errors_before = _error_log_size()
        started = time.perf_counter()
        try:
            proc = subprocess.run(
                ["/bin/sh", "-c", w.command],
                input=json.dumps(event),
                capture_output=True,
                text=True,
                env=env,
                cwd=root,
                timeout=w.timeout,
            )
        except subprocess.TimeoutExpired:
            checks.append(Check("hooks", "fail", f"{w.event}: no answer within its {w.timeout} s timeout ({w.source})"))
            continue
        latency_ms = round((time.perf_counter() - started) * 1000, 1)
        details = {"event": w.event, "source": w.source, "latency_ms": latency_ms, "exit_code": proc.returncode}
        problem = None
        if proc.returncode != 0:
            problem = f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
        else:
            problem = _valid_answer(w.event, proc.stdout)
        failures = _new_errors(errors_before)
        setting_up = bool(w.env) and problem is None and not proc.stdout.strip() and _plugin_not_ready(w.env)
        if problem is None and failures and not setting_up:
            problem = f"it failed open (error log: {failures[-1][:300]})"
        if problem:
            checks.append(Check("hooks", "fail", f"{w.event} ({w.source}): {problem}", details=details))
        elif setting_up:
            checks.append(
                Check(
                    "hooks",
                    "warn",
                    f"{w.event}: the plugin is still setting up its Python environment; the hook ran open in "
                    f"{latency_ms} ms",
                    f"progress: {Path(w.env['CLAUDE_PLUGIN_DATA']) / 'setup.log'}",
                    details,
                )
            )
        else:
            slow = latency_ms > w.timeout * 1000 / 2
            checks.append(
                Check(
                    "hooks",
                    "warn" if slow else "ok",
                    f"{w.event}: answered in {latency_ms} ms" + (" (over half its timeout)" if slow else ""),
                    details=details,
                )
            )
    _forget_session(session)
    return checks


def _plugin_not_ready(env: dict[str, str]) -> bool:
    if os.environ.get("GATE_PYTHON"):
        return False
    stamp = Path(env.get("CLAUDE_PLUGIN_DATA", "")) / "venv" / ".gate-ready"
    try:
        return stamp.read_text(encoding="utf-8").strip() != env.get("CLAUDE_PLUGIN_ROOT")
    except OSError:
        return True


def _forget_session(session: str) -> None:
    """The synthetic session's ledger is of no use to anyone: remove it."""
    try:
        from gate.session.ledger import ledger_path
    except ImportError:
        return
    path = Path(ledger_path(session))
    for candidate in (path, path.with_name(path.name + ".lock"), path.with_suffix(".lock")):
        with contextlib.suppress(OSError):
            candidate.unlink()


# --- store, config, rules ---------------------------------------------------------------------------------------


def store_health(root: Path) -> list[Check]:
    try:
        from gate.memory.store import health
    except ImportError as error:
        return [Check("store", "warn", f"store health is not available in this version ({error})")]
    try:
        report = health(ProjectPaths.for_cwd(root))
    except Exception as error:
        return [Check("store", "fail", f"cannot read the memory store: {type(error).__name__}: {error}")]
    checks = []
    counts = report.get("counts", {})
    total = sum(counts.values()) if isinstance(counts, dict) else 0
    summary = ", ".join(f"{n} {scope}" for scope, n in sorted(counts.items())) or "none yet"
    checks.append(Check("store", "ok", f"memories: {total} ({summary})", details=report))
    for item in report.get("corrupt", []):
        checks.append(
            Check(
                "store",
                "warn",
                f"corrupt memory file skipped: {item.get('path')}: {item.get('error')}",
                "fix or delete it by hand",
            )
        )
    if report.get("index_behind"):
        checks.append(
            Check(
                "store",
                "warn",
                "the search index is behind the memory files",
                "run `gate reindex` (searches also catch up)",
            )
        )
    return checks


def config_health(root: Path) -> list[Check]:
    from gate.commands.config import check

    problems = check(root)
    if problems:
        return [Check("config", "fail", problem) for problem in problems]
    return [Check("config", "ok", "settings are valid")]


def rules_health(root: Path) -> list[Check]:
    import tomllib

    from gate.rules import shipped_rules_dir

    directory = Path(shipped_rules_dir())
    found = sorted(directory.glob("*.toml")) if directory.is_dir() else []
    if not found:
        return [Check("rules", "fail", f"no rules found in {directory}", "reinstall gate; the rules ship with it")]
    broken = []
    for path in found:
        try:
            tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            broken.append(f"{path.name}: {error}")
    for layer in (Path(ProjectPaths.for_cwd(root).root, ".gate", "rules"),):
        for path in sorted(layer.glob("*.toml")) if layer.is_dir() else []:
            try:
                tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                broken.append(f"{path}: {error}")
    if broken:
        return [Check("rules", "fail", f"unreadable rules: {'; '.join(broken)}")]
    return [Check("rules", "ok", f"{len(found)} rule files in {directory}")]


def recent_failures(hours: float = 24) -> list[Check]:
    """Hook failures in the error log (each one a turn that went on without gate)."""
    try:
        lines = Path(error_log_file()).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - hours * 3600))
    recent = []
    for line in lines:
        try:
            stamp = str(json.loads(line).get("ts", ""))
        except ValueError:
            stamp = line[:20]
        if stamp >= cutoff and '"PluginNotReady"' not in line:  # the first-use notice is not a failure
            recent.append(line)
    if not recent:
        return []
    return [
        Check(
            "errors",
            "warn",
            f"{len(recent)} hook failure(s) in the last {hours:g} h; the last: {recent[-1][:300]}",
            f"all of them: {error_log_file()}",
        )
    ]


# --- competition ------------------------------------------------------------------------------------------------


def competitors(settings: Settings, root: Path) -> list[Check]:
    checks: list[Check] = []
    for scope, data in settings.data.items():
        hooks = data.get("hooks") if isinstance(data, dict) else None
        if not isinstance(hooks, dict):
            continue
        for event, groups in hooks.items():
            for group in groups if isinstance(groups, list) else []:
                entries = group.get("hooks") if isinstance(group, dict) else None
                for entry in entries if isinstance(entries, list) else []:
                    command = entry.get("command") if isinstance(entry, dict) else None
                    if (
                        isinstance(command, str)
                        and not wiring.is_gate_command(command)
                        and _MEMORY_WORDS.search(command)
                    ):
                        checks.append(
                            Check(
                                "competition",
                                "warn",
                                f"another memory hook on {event} in {settings.paths[scope]}: {command[:120]}",
                                "two memory systems inject competing context; gate leaves it alone — remove it "
                                "yourself if it is not wanted",
                            )
                        )
    for plugin_id, enabled in settings.enabled_plugins().items():
        if enabled and plugin_id.partition("@")[0] != PLUGIN_NAME and _MEMORY_WORDS.search(plugin_id):
            checks.append(
                Check(
                    "competition",
                    "warn",
                    f"another memory plugin is enabled: {plugin_id}",
                    f"gate leaves it alone; to disable it: claude plugin disable {plugin_id}",
                )
            )
    for name in _mcp_servers(root):
        if _MEMORY_WORDS.search(name):
            checks.append(
                Check(
                    "competition", "info", f"an MCP memory server is configured: {name} (the agent may store there too)"
                )
            )
    checks.extend(auto_memory(settings, root))
    return checks


def _mcp_servers(root: Path) -> list[str]:
    names: list[str] = []
    sources: list[Any] = []
    for path in (root / ".mcp.json", Path.home() / ".claude.json"):
        try:
            sources.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    for doc in sources:
        if not isinstance(doc, dict):
            continue
        for servers in (doc.get("mcpServers"), (doc.get("projects", {}).get(str(root)) or {}).get("mcpServers")):
            if isinstance(servers, dict):
                names.extend(str(name) for name in servers)
    return names


def auto_memory(settings: Settings, root: Path) -> list[Check]:
    """Claude Code's own auto memory (on unless disabled by setting or env, as 2.1.332 decides), and what it
    already holds for this project: `gate import --from claude-memory` brings that over."""
    from gate.claude_code import auto_memory_dir, topic_files

    disabled_env = os.environ.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "").strip().lower() in _TRUE_ENV
    setting = settings.merged("autoMemoryEnabled")
    directory = auto_memory_dir(root).path
    kept = len(topic_files(directory))  # nothing when it does not exist (os.walk)
    held = f"; {directory} holds {kept} memor{'ies' if kept > 1 else 'y'} it kept for this project" if kept else ""
    bring = "to bring them into gate: `gate import --from claude-memory --dry-run`, then without --dry-run"
    if disabled_env or setting is False:
        return [Check("competition", "ok", f"Claude Code's own auto memory is off{held}", bring if kept else None)]
    if not kept:
        bring = "`gate import --from claude-memory` brings its memories over once it has some"
    alone = (
        'to use gate alone, set "autoMemoryEnabled": false in .claude/settings.json (or '
        "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1); gate does not change it"
    )
    return [
        Check(
            "competition",
            "warn",
            "Claude Code's own auto memory is on: the agent may also keep notes in its memory directory, "
            f"which can disagree with gate's{held}",
            f"{bring}; {alone}",
        )
    ]


def path_info() -> list[Check]:
    found = shutil.which("gate")
    if found:
        return [Check("path", "ok", f"`gate` is on PATH: {found}")]
    return [
        Check(
            "path",
            "info",
            "`gate` is not on PATH; gate's messages name it by absolute path, so the agent can still run it",
            "for your own shell: ln -s <gate's venv>/bin/gate ~/.local/bin/gate",
        )
    ]


def diagnose(root: Path, run: bool = True) -> list[Check]:
    settings = Settings.read(root)
    wired_settings, checks = settings_wiring(settings)
    wired_plugin, plugin_checks = plugin_wiring(settings, root)
    checks += plugin_checks
    wired = wired_settings + wired_plugin
    checks += coverage(wired)
    checks += recent_failures()  # before the runs below, whose own failures are reported on their own
    if run:
        checks += run_hooks(wired, root)
    checks += store_health(root)
    checks += config_health(root)
    checks += rules_health(root)
    checks += competitors(settings, root)
    checks += path_info()
    return checks


def as_json(checks: list[Check]) -> list[dict[str, Any]]:
    return [asdict(check) for check in checks]
