"""`gate doctor` for the Codex CLI (cold path): gate's entries in Codex's hooks files, every event wired once,
the command told it serves Codex, the project trusted (Codex runs a project's hooks only then), the allow rules
for gate's commands, and the one-time review of the hooks that only the user can give."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import gate.install.diagnose.earlier as earlier
from gate.hosts.codex import install as codex
from gate.install import files, jsonedit, launcher, wiring
from gate.install.diagnose.base import Check, Wired

APPROVE = ("start codex in the project and approve gate's hooks once in /hooks (Codex shows a new or changed hook "
           "there and runs it only once it is reviewed; `codex exec --dangerously-bypass-hook-trust` skips the "
           "review for one run)")


def wired_hooks(root: Path) -> tuple[list[Wired], list[Check]]:
    """gate's entries in the project's and the user's hooks.json, and a check per file."""
    found: list[Wired] = []
    checks: list[Check] = []
    for scope in codex.SCOPES:
        path = codex.hooks_path(scope, root)
        text = files.read_text(path)
        if not text or not text.strip():
            continue
        try:
            data = jsonedit.loads_strict(text.removeprefix("\ufeff"))
        except jsonedit.JSONSyntaxError as error:
            checks.append(Check("codex", "fail", f"{path} is not valid JSON: {error}; Codex reads no hook from it",
                                f"fix it (python3 -m json.tool {path} shows where)"))
            continue
        entries = wiring.find_gate_entries(data)
        for entry in entries:
            hook = entry.group["hooks"][entry.hook_index]
            spec = next((s for s in codex.EVENTS if s.event == entry.event), None)
            timeout = hook.get("timeout") if isinstance(hook.get("timeout"), int) else (spec.timeout if spec else 60)
            found.append(Wired(entry.event, entry.command, str(path), timeout, {}, entry.group.get("matcher")))
        if entries:
            events = sorted({e.event for e in entries})
            checks.append(Check("codex", "ok", f"{path} ({scope}) wires {', '.join(events)}"))
            stale = earlier.file_check("codex", path, scope, data, codex.EVENTS, "gate install --agent codex")
            if stale is not None:
                checks.append(stale)
    return found, checks


def _trusted(root: Path) -> bool | None:
    """Whether the user's Codex config trusts the project (or a folder above it); None: unreadable."""
    path = codex.codex_home() / "config.toml"
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return None
    projects = config.get("projects")
    if not isinstance(projects, dict):
        return False
    real = Path(os.path.realpath(root))
    for folder, entry in projects.items():
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted":
            try:
                if real == Path(os.path.realpath(folder)) or real.is_relative_to(os.path.realpath(folder)):
                    return True
            except (OSError, ValueError):
                continue
    return False


def codex_checks(root: Path, run: bool = True) -> list[Check]:
    from gate.install.diagnose.hooks import run_hooks

    wired, checks = wired_hooks(root)
    if not wired:
        return [*checks, Check("codex", "fail", "gate is not wired into Codex for this project: neither "
                               ".codex/hooks.json nor ~/.codex/hooks.json runs it",
                               "run `gate install --agent codex` (project) or with --scope user (every project)")]
    sources = {w.source for w in wired}
    events = {w.event for w in wired}
    missing = [e for e in codex.EVENT_NAMES if e not in events]
    if earlier.broken(missing):  # an event an earlier gate did not wire yet is in the file's own finding
        checks.append(Check("codex", "fail", f"not wired in Codex: {', '.join(missing)}",
                            "run `gate install --agent codex` again to rewire every event"))
    if len(sources) > 1:
        checks.append(Check("codex", "warn", f"gate is wired in both {' and '.join(sorted(sources))}: Codex runs "
                            "each hook twice", "remove one: gate uninstall --agent codex --scope project|user"))
    untold = sorted({w.source for w in wired if "--agent codex" not in w.command})
    if untold:
        checks.append(Check("codex", "fail", f"{', '.join(untold)} runs gate's hook without `--agent codex`: its "
                            "answers are checked against Claude Code's schema, apply_patch is not read as an edit, "
                            "and its messages may name a `gate` Codex's login shell cannot find",
                            "run `gate install --agent codex` to rewrite the entries"))
    project_file = str(codex.hooks_path("project", root))
    written = files.read_text(launcher.path())
    if project_file in sources and written is not None and '"$@"' not in written:
        checks.append(Check("codex", "fail", f"this machine's hook launcher {launcher.path()} was written by an "
                            "older gate: it drops `--agent codex`, so the project's Codex hooks answer as for "
                            "Claude Code", "rewrite it: gate install --launcher-only"))
    if project_file in sources:
        trusted = _trusted(root)
        if trusted is False:
            checks.append(Check("codex", "warn", "Codex does not trust this project yet, so it runs none of the "
                                "hooks in its .codex/hooks.json", "start codex in the project and trust it when "
                                "asked (or `codex exec --trust`)"))
        elif trusted:
            checks.append(Check("codex", "ok", "Codex trusts this project: it reads its .codex/hooks.json"))
    rules = codex.rules_path()
    script = os.path.join(os.path.dirname(wiring.default_python()), "gate")
    text = files.read_text(rules) or ""
    if f'"{script}", "remember"' in text:
        checks.append(Check("codex", "ok", f"gate's commands are allowed without a prompt in Codex ({rules})"))
    else:
        checks.append(Check("codex", "warn", f"{rules} does not allow {script} search|show|remember|verify: Codex "
                            "asks before each one the agent runs", "run `gate install --agent codex` again"))
    checks.append(Check("codex", "info", "Codex runs gate's hooks only after you have reviewed them once", APPROVE))
    if run:
        checks += run_hooks(wired, root)
    return checks
