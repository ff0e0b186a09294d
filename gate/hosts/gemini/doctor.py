"""`gate doctor` for the Gemini CLI (cold path): gate's entries in Gemini's settings files, every event wired once,
the command told it serves Gemini, the folder trusted (Gemini runs no settings hook in an untrusted folder), the
allow rules for gate's commands, and what Gemini cannot do (no event after a compression)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import gate.install.diagnose.earlier as earlier
from gate.hosts.gemini import install as gemini
from gate.install import files, jsonedit, launcher, wiring
from gate.install.diagnose.base import Check, Wired

TRUST = ("trust the folder when Gemini asks (or run /permissions in gemini there; a folder is trusted in "
         "~/.gemini/trustedFolders.json); `gemini --skip-trust` or GEMINI_CLI_TRUST_WORKSPACE=true trusts it for "
         "one run")
NO_COMPACTION = ("Gemini has no event after it compresses the conversation (PreCompress is advisory only), so the "
                 "session-start memories are not given again after a compression; they are at the next session")


def wired_hooks(root: Path) -> tuple[list[Wired], list[Check]]:
    """gate's entries in the project's and the user's settings.json, and a check per file."""
    found: list[Wired] = []
    checks: list[Check] = []
    for scope in gemini.SCOPES:
        path = gemini.settings_path(scope, root)
        text = files.read_text(path)
        if not text or not text.strip():
            continue
        try:
            data = jsonedit.loads_strict(text.removeprefix("\ufeff"))
        except jsonedit.JSONSyntaxError as error:
            checks.append(Check("gemini", "fail", f"{path} is not plain JSON: {error}; gate cannot read its hooks "
                                "(Gemini itself also takes comments there)", "fix it, or remove its comments"))
            continue
        entries = [e for e in wiring.find_gate_entries(data) if e.event in gemini.EVENT_NAMES]
        for entry in entries:
            hook = entry.group["hooks"][entry.hook_index]
            spec = next(s for s in gemini.EVENTS if s.event == entry.event)
            millis = hook.get("timeout") if isinstance(hook.get("timeout"), int) else 60_000
            found.append(Wired(entry.event, entry.command, str(path), max(1, millis // 1000), {},
                               entry.group.get("matcher")))
            if millis < spec.timeout:
                checks.append(Check("gemini", "warn", f"{path}: {entry.event} times out after {millis} ms (Gemini "
                                    "counts milliseconds)", "run `gate install --agent gemini` again"))
        if entries:
            events = sorted({e.event for e in entries})
            checks.append(Check("gemini", "ok", f"{path} ({scope}) wires {', '.join(events)}"))
            stale = earlier.file_check("gemini", path, scope, data, gemini.EVENTS, "gate install --agent gemini")
            if stale is not None:
                checks.append(stale)
    return found, checks


def _trusted(root: Path) -> bool | None:
    """Whether Gemini trusts the folder by its trustedFolders.json (longest rule wins); None: no rule for it, or
    the file is unreadable."""
    if os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return True
    path = Path(os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or gemini.gemini_home() / ".gemini"
                / "trustedFolders.json")
    try:
        rules = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None
    if not isinstance(rules, dict):
        return None
    real = Path(os.path.realpath(root))
    best, verdict = -1, None
    for folder, level in rules.items():
        effective = os.path.dirname(folder) if level == "TRUST_PARENT" else folder
        try:
            inside = real == Path(os.path.realpath(effective)) or real.is_relative_to(os.path.realpath(effective))
        except (OSError, ValueError):
            continue
        if inside and len(folder) > best:
            best, verdict = len(folder), level
    if verdict == "DO_NOT_TRUST":
        return False
    return True if verdict in ("TRUST_FOLDER", "TRUST_PARENT") else None


def _folder_trust_on() -> bool:
    """Gemini's folder trust (security.folderTrust.enabled, on by default) as the user's settings say."""
    text = files.read_text(gemini.settings_path("user", Path.home()))
    try:
        data = jsonedit.loads_strict(text.removeprefix("\ufeff")) if text and text.strip() else {}
    except jsonedit.JSONSyntaxError:
        return True
    security = data.get("security") if isinstance(data, dict) else None
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    return not (isinstance(trust, dict) and trust.get("enabled") is False)


def gemini_checks(root: Path, run: bool = True) -> list[Check]:
    from gate.install.diagnose.hooks import run_hooks

    wired, checks = wired_hooks(root)
    if not wired:
        return [*checks, Check("gemini", "fail", "gate is not wired into Gemini for this project: neither "
                               ".gemini/settings.json nor ~/.gemini/settings.json runs it",
                               "run `gate install --agent gemini` (project) or with --scope user (every project)")]
    sources = {w.source for w in wired}
    events = {w.event for w in wired}
    missing = [e for e in gemini.EVENT_NAMES if e not in events]
    if earlier.broken(missing):  # an event an earlier gate did not wire yet is in the file's own finding
        checks.append(Check("gemini", "fail", f"not wired in Gemini: {', '.join(missing)}",
                            "run `gate install --agent gemini` again to rewire every event"))
    if len(sources) > 1:
        checks.append(Check("gemini", "warn", f"gate is wired in both {' and '.join(sorted(sources))}: Gemini merges "
                            "them and runs the same hook under two commands",
                            "remove one: gate uninstall --agent gemini --scope project|user"))
    untold = sorted({w.source for w in wired if "--agent gemini" not in w.command})
    if untold:
        checks.append(Check("gemini", "fail", f"{', '.join(untold)} runs gate's hook without `--agent gemini`: "
                            "Gemini's events are not read (BeforeAgent, AfterAgent, BeforeTool mean nothing to "
                            "the hook) and its answers are not Gemini's",
                            "run `gate install --agent gemini` to rewrite the entries"))
    project_file = str(gemini.settings_path("project", root))
    written = files.read_text(launcher.path())
    if project_file in sources and written is not None and '"$@"' not in written:
        checks.append(Check("gemini", "fail", f"this machine's hook launcher {launcher.path()} was written by an "
                            "older gate: it drops `--agent gemini`, so the project's Gemini hooks answer as for "
                            "Claude Code", "rewrite it: gate install --launcher-only"))
    if _folder_trust_on():
        trusted = _trusted(root)
        if trusted is False:
            checks.append(Check("gemini", "warn", "Gemini does not trust this folder (trustedFolders.json says "
                                "DO_NOT_TRUST), so it runs none of gate's hooks here, the user's included", TRUST))
        elif trusted:
            checks.append(Check("gemini", "ok", "Gemini trusts this folder: it runs the hooks of its settings"))
        else:
            checks.append(Check("gemini", "warn", "Gemini has not been told to trust this folder: until it is, it "
                                "runs none of gate's hooks here (project or user scope)", TRUST))
    policy = gemini.policy_path()
    script = os.path.join(os.path.dirname(wiring.default_python()), "gate")
    text = files.read_text(policy) or ""
    if f'"{script} remember"' in text or (not os.path.isfile(script) and '"gate remember"' in text):
        checks.append(Check("gemini", "ok", f"gate's commands are allowed without a prompt in Gemini ({policy})"))
    else:
        checks.append(Check("gemini", "warn", f"{policy} does not allow gate search|show|remember|verify: Gemini "
                            "asks before each one the agent runs (and refuses them in a headless `gemini -p`)",
                            "run `gate install --agent gemini` again"))
    checks.append(Check("gemini", "info", NO_COMPACTION))
    if run:
        checks += run_hooks(wired, root)
    return checks
