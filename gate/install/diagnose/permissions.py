"""Whether the commands gate's messages tell the agent to run pass without an approval prompt: an allow rule
for each, spelled as the messages spell it here, in one of the settings files Claude Code merges."""

from __future__ import annotations

import json
import os
from pathlib import Path

from gate import render
from gate.install import permissions
from gate.install.diagnose.base import Check, Settings


def _claude_state_file() -> Path:
    """Claude Code's own state file (~/.claude.json; inside CLAUDE_CONFIG_DIR when that is set)."""
    override = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(override).expanduser() / ".claude.json" if override else Path.home() / ".claude.json"


def untrusted(root: Path) -> bool:
    """True when Claude Code's state file says this folder's trust dialog was not accepted (measured on
    2.1.332: until it is, a project's allow rules are ignored; trusting a parent folder does not cover it).
    False when there is no state file to tell: nothing to say then."""
    try:
        state = json.loads(_claude_state_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    projects = state.get("projects") if isinstance(state, dict) else None
    entry = projects.get(str(root)) if isinstance(projects, dict) else None
    return not (isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True)


def _allowed(settings: Settings) -> dict[str, list[str]]:
    """Each allow rule in force, with the scopes whose file holds it."""
    found: dict[str, list[str]] = {}
    for scope in settings.paths:
        for item in permissions.allow_list(settings.data.get(scope)):
            if isinstance(item, str):
                found.setdefault(item, []).append(scope)
    return found


def permission_rules(settings: Settings, root: Path) -> list[Check]:
    spelled = render.gate_command()
    if not permissions.is_gate_rule(permissions.rule(spelled, permissions.SUBCOMMANDS[0])):
        return [
            Check(
                "permissions",
                "info",
                f"gate's messages name it as `{spelled}` (no `gate` console script here), which no allow rule "
                "covers: the agent's gate commands ask for approval",
                "install gate with pip into its environment so that the `gate` script exists, then `gate install`",
            )
        ]
    wanted = {sub: permissions.rule(spelled, sub) for sub in permissions.SUBCOMMANDS}
    allowed = _allowed(settings)
    missing = [sub for sub, item in wanted.items() if item not in allowed]
    names = ", ".join(f"`{spelled} {sub}`" for sub in permissions.SUBCOMMANDS)
    if not missing:
        scopes = sorted({scope for item in wanted.values() for scope in allowed[item]})
        if scopes == ["project"] and untrusted(root):
            return [
                Check(
                    "permissions",
                    "info",
                    f"{names} are allowed in the project's settings, which Claude Code ignores until you trust "
                    "this folder",
                    "open Claude Code in the project once and accept its trust dialog (or allow them in local "
                    "settings: `gate install --scope local --permissions-only`)",
                )
            ]
        return [Check("permissions", "ok", f"{names} run without an approval prompt (allowed in {', '.join(scopes)})")]
    if spelled == permissions.PORTABLE:
        hint = "run `gate install` again: it adds them (with the plugin: `gate install --permissions-only`)"
    else:
        # The absolute spelling is this machine's: project settings (committed) never get it; the local settings
        # are this machine's for this project (the plugin's case too: docs/install.md). Spelled as the messages
        # spell gate, since `gate` is not on PATH.
        hint = (
            "gate is not on PATH, so its messages name it by absolute path; put it on PATH (see the path check), "
            f"or allow that spelling on this machine: `{spelled} install --scope local --permissions-only`"
        )
    # Gate on PATH: a missing rule is gate's to add. An absolute spelling may be only the doctor's (Claude Code's
    # PATH can differ from this shell's), and a project file cannot hold it: worth knowing, not a fault.
    status = "warn" if spelled == permissions.PORTABLE else "info"
    return [
        Check(
            "permissions",
            status,
            f"the agent's {', '.join(f'`{spelled} {sub}`' for sub in missing)} ask for your approval every time: "
            "no allow rule for them in any settings file",
            hint,
            {"missing": [wanted[sub] for sub in missing]},
        )
    ]
