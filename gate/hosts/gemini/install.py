"""Wiring gate into the Gemini CLI (cold path): `gate install --agent gemini` and `gate uninstall --agent gemini`.

Gemini CLI 0.61 reads hooks from the `hooks` key of its settings files: the user's (`~/.gemini/settings.json`;
`GEMINI_CLI_HOME` stands for the home folder) and the project's `.gemini/settings.json`, merged (the lists of
each event concatenated). The shape is Claude Code's (`{"hooks": {"EVENT": [{"matcher": …, "hooks": [{"type":
"command", "command": …, "timeout": …}]}]}}`), with Gemini's event names, a timeout in milliseconds, a tool
matcher that is a regular expression tested anywhere in the tool's name, and a SessionStart matcher compared
whole with the source. Gemini runs each command with `bash -c`. gate's entries carry the marker of Claude Code's
(gate/install/wiring.py), so uninstall removes exactly them.

Gemini runs the hooks of its settings files only in a trusted folder (its folder trust, on by default: the
user trusts a folder when the CLI asks, or in ~/.gemini/trustedFolders.json); in an untrusted folder it runs
none, the user's included.

Allow rules: Gemini's policy engine reads `*.toml` in `~/.gemini/policies/` (the user tier; the project tier,
`.gemini/policies/`, is not read by 0.61's policy engine). gate's rules name this machine's gate, so they live in a
file of gate's own there, `memory-gate.toml`, whatever the scope of the hooks.
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
AGENT_ARGS = ("--agent", "gemini")
POLICY_FILE = "memory-gate.toml"
# The tools whose calls the search-first check reads (gate/hosts/gemini/hook_io.py maps them): the shell and the
# two edit tools. Anchored whole: Gemini tests the matcher anywhere in the name (an MCP tool may hold "replace").
TOOL_MATCHER = "^(run_shell_command|replace|write_file)$"
# The tools whose path anchors are delivered after the call (AfterTool: BeforeTool takes no context): those, and
# the reads.
AFTER_TOOL_MATCHER = "^(read_file|run_shell_command|replace|write_file)$"

# The events gate answers, as Gemini names them; timeouts in milliseconds. SessionStart takes no matcher: Gemini
# compares a lifecycle matcher whole with the source, and gate wants every source. PreCompress is not wired:
# it is advisory, and nothing follows a compression that could take the memories back in.
EVENTS: tuple[wiring.EventSpec, ...] = (
    wiring.EventSpec("SessionStart", None, 10_000),
    wiring.EventSpec("BeforeAgent", None, 10_000),
    wiring.EventSpec("BeforeTool", TOOL_MATCHER, 5_000),
    wiring.EventSpec("AfterTool", AFTER_TOOL_MATCHER, 5_000),
    wiring.EventSpec("AfterAgent", None, 10_000),
)
EVENT_NAMES = tuple(spec.event for spec in EVENTS)


def gemini_home() -> Path:
    """The folder that holds the user's .gemini (Gemini honours GEMINI_CLI_HOME before the home folder)."""
    value = os.environ.get("GEMINI_CLI_HOME", "").strip()
    return Path(value).expanduser() if value else Path(os.path.expanduser("~"))


def settings_path(scope: str, root: Path) -> Path:
    if scope not in SCOPES:
        raise GateError(f"Gemini has no {scope} scope",
                        "use --scope project (the project's .gemini/settings.json) or user")
    return (root if scope == "project" else gemini_home()) / ".gemini" / "settings.json"


def policy_path() -> Path:
    return gemini_home() / ".gemini" / "policies" / POLICY_FILE


def hook_command(scope: str, python: str) -> str:
    """Project scope: Claude Code's committed command told the agent (wiring.portable_command: this machine's
    launcher, found under $HOME; where there is none, the event drained and exit 0, with no prose); user scope:
    the interpreter itself."""
    if scope == "project":
        return wiring.portable_command(AGENT_ARGS)
    return f"{shlex.join([*launcher.hook_argv(python), *AGENT_ARGS])} {wiring.MARKER}"


def spellings(python: str) -> list[str]:
    """How gate's messages may name it: `gate`, and this installation's own script by path."""
    script = os.path.join(os.path.dirname(python), "gate")
    return ["gate"] + ([script] if os.path.isfile(script) else [])


def policy_text(python: str) -> str:
    """gate's allow rules for Gemini: its four commands, spelled `gate` and by this installation's path."""
    prefixes = [f"{shlex.quote(spelled)} {sub}" for spelled in spellings(python) for sub in SUBCOMMANDS]
    listed = ", ".join(hooks_file.quoted(prefix) for prefix in prefixes)
    return (
        "# memory-gate: the commands gate's messages tell the agent to run, allowed without an approval prompt.\n"
        "# Written by `gate install --agent gemini`, removed by `gate uninstall --agent gemini --scope user`.\n"
        "[[rule]]\n"
        'toolName = "run_shell_command"\n'
        f"commandPrefix = [{listed}]\n"
        'decision = "allow"\n'
        "priority = 100\n"
    )


def plan_install(scope: str, root: Path, python: str) -> list[Plan]:
    """The settings file of the scope, and the user's policy file."""
    path = settings_path(scope, root)
    settings = hooks_file.plan_install(scope, path, settings_path("user", root), EVENTS, hook_command(scope, python),
                                       "Gemini", f"{root} is your home folder: its .gemini/settings.json is your "
                                       "user settings file")
    policy = policy_path()
    return [settings, Plan("user", policy, files.read_text(policy), policy_text(python))]


def plan_uninstall(scope: str, root: Path) -> list[Plan]:
    """gate's entries out of the scope's settings file (the file removed when gate created it and nothing else is
    left); at user scope the policy file too (a project's uninstall leaves it for the other projects)."""
    plans = [hooks_file.plan_uninstall(scope, settings_path(scope, root))]
    if scope == "user":
        policy = policy_path()
        plans.append(Plan("user", policy, files.read_text(policy), None))
    return plans
