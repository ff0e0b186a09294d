"""Other memory tools beside gate: memory hooks, plugins, MCP servers, and Claude Code's own auto memory."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from gate.install import wiring
from gate.install.diagnose.base import PLUGIN_NAME, Check, Settings

_MEMORY_WORDS = re.compile(
    r"mem0|memor(y|ies)|\bmem\b|memento|remember|supermemory|letta|graphiti|\bzep\b|cipher", re.IGNORECASE
)


_TRUE_ENV = {"1", "true", "yes", "on"}


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
    # Information, not a warning: a warning is something of gate's that does not work, and auto memory is
    # Claude Code's default, on in every fresh install, breaking nothing of gate's. What it already holds for
    # the project is said, with how to import it (gate's recall does not see it until then).
    return [
        Check(
            "competition",
            "info",
            "Claude Code's own auto memory is on (its default): the agent may also keep notes there, apart from "
            f"gate's{held}",
            f"{bring}; {alone}",
        )
    ]
