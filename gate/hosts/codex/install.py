"""Wiring gate into the Codex CLI (cold path): `gate install --agent codex` and `gate uninstall --agent codex`.

Codex 0.171 reads hooks from `hooks.json` in each config folder: the user's (`$CODEX_HOME`, default `~/.codex`)
and a trusted project's `.codex/`. The file is shaped as Claude Code's settings hooks are
(`{"hooks": {"EVENT": [{"matcher": …, "hooks": [{"type": "command", "command": …, "timeout": …}]}]}}`); Codex
runs each command with `$SHELL -lc` and asks the user to review every new or changed hook once (in the TUI:
/hooks) before it runs. gate's entries carry the same marker as in Claude Code's settings
(gate/install/wiring.py), so uninstall removes exactly them.

Allow rules: Codex's exec policy reads `rules/*.rules` in the same config folders (Starlark `prefix_rule()`s).
gate's messages name gate by absolute path for Codex (gate/hosts/codex/hook_io.py: its shell is a login shell
whose PATH may not hold gate), so the rules name this machine's paths: they live in the user's config folder,
in a file of gate's own (`memory-gate.rules`), whatever the scope of the hooks.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from gate.errors import GateError
from gate.install import files, hooks_file, launcher, wiring
from gate.install.commands import Plan
from gate.install.permissions import SUBCOMMANDS

SCOPES = ("project", "user")
AGENT_ARGS = ("--agent", "codex")
RULES_FILE = "memory-gate.rules"

# The events gate answers, as Codex names them. PreToolUse: a shell call reaches the hook as "Bash", an edit as
# "apply_patch", a spawn as "collaborationspawn_agent" (or "spawn_agent"), an MCP tool as mcp__SERVER__TOOL
# (gate/hosts/codex/hook_io.py reads them). Codex's matchers are regular expressions searched in the name: the
# MCP part (gate/install/wiring.py, as for Claude Code) selects the tools whose name says they write
# (rules/triggers.toml [search_first] change_tools), so a read-only MCP call costs no hook process.
# SessionStart's matcher is its source; SubagentStart's, the child's role (any).
TOOL_MATCHER = rf"^(?:Bash|apply_patch|collaborationspawn_agent|spawn_agent)$|{wiring.MCP_CHANGE_MATCHER}"
EVENTS: tuple[wiring.EventSpec, ...] = (
    wiring.EventSpec("SessionStart", "startup|resume|clear|compact|fork", 10),
    wiring.EventSpec("UserPromptSubmit", None, 10),
    wiring.EventSpec("PreToolUse", TOOL_MATCHER, 5),
    wiring.EventSpec("SubagentStart", None, 10),
    wiring.EventSpec("Stop", None, 10),
    wiring.EventSpec("PreCompact", None, 10),
)
EVENT_NAMES = tuple(spec.event for spec in EVENTS)


def codex_home() -> Path:
    value = os.environ.get("CODEX_HOME", "").strip()
    return Path(value).expanduser() if value else Path(os.path.expanduser("~")) / ".codex"


def hooks_path(scope: str, root: Path) -> Path:
    if scope not in SCOPES:
        raise GateError(f"Codex has no {scope} scope", "use --scope project (the repository's .codex/) or user")
    return (root / ".codex" if scope == "project" else codex_home()) / "hooks.json"


def rules_path() -> Path:
    return codex_home() / "rules" / RULES_FILE


def hook_command(scope: str, python: str) -> str:
    """Project scope: Claude Code's committed command told the agent (wiring.portable_command: this machine's
    launcher, found under $HOME; where there is none, the event drained and exit 0, with no prose); user scope:
    the interpreter itself."""
    if scope == "project":
        return wiring.portable_command(AGENT_ARGS)
    return f"{shlex.join([*launcher.hook_argv(python), *AGENT_ARGS])} {wiring.MARKER}"


def rules_text(python: str) -> str:
    """gate's allow rules for Codex: its four commands, spelled `gate` and by this installation's path."""
    script = os.path.join(os.path.dirname(python), "gate")
    spellings = ["gate"] + ([script] if os.path.isfile(script) else [])
    lines = [
        "# memory-gate: the commands gate's messages tell the agent to run, allowed without an approval prompt.",
        "# Written by `gate install --agent codex`, removed by `gate uninstall --agent codex --scope user`.",
    ]
    for spelled in spellings:
        for sub in SUBCOMMANDS:
            pattern = f"[{hooks_file.quoted(spelled)}, {hooks_file.quoted(sub)}]"
            lines.append(f'prefix_rule(pattern = {pattern}, decision = "allow")')
    return "\n".join(lines) + "\n"


def plan_install(scope: str, root: Path, python: str) -> list[Plan]:
    """The hooks file of the scope, and the user's rules file."""
    path = hooks_path(scope, root)
    hooks = hooks_file.plan_install(scope, path, hooks_path("user", root), EVENTS, hook_command(scope, python),
                                    "Codex", f"{root} holds your Codex home: its .codex/hooks.json is your user "
                                    "hooks file")
    rules = rules_path()
    return [hooks, Plan("user", rules, files.read_text(rules), rules_text(python))]


def plan_uninstall(scope: str, root: Path) -> list[Plan]:
    """gate's entries out of the scope's hooks file (the file removed when gate created it and nothing else is
    left); at user scope the rules file too (a project's uninstall leaves it for the other projects)."""
    plans = [hooks_file.plan_uninstall(scope, hooks_path(scope, root))]
    if scope == "user":
        rules = rules_path()
        plans.append(Plan("user", rules, files.read_text(rules), None))
    return plans


def installed(scope: str, root: Path) -> list[wiring.GateEntry]:
    """gate's entries in the scope's hooks file ([] when none, or the file is not JSON)."""
    from gate.install import jsonedit

    text = files.read_text(hooks_path(scope, root))
    if not text or not text.strip():
        return []
    try:
        return wiring.find_gate_entries(jsonedit.loads_strict(text.removeprefix("\ufeff")))
    except jsonedit.JSONSyntaxError:
        return []
