"""The plugin's wiring: an enabled memory-gate plugin, where Claude Code runs it from, and whether its own
Python environment is set up."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import gate.install.diagnose.earlier as earlier
from gate.install import files, wiring
from gate.install.diagnose.base import PLUGIN_NAME, Check, Settings, Wired


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
        # Every entry of the plugin's hooks.json is gate's (its command carries no marker).
        entries: list[earlier.Entry] = []
        for event, groups in hooks.items():
            for group in groups:
                for entry in group.get("hooks", []):
                    entries.append((event, group.get("matcher"), entry["command"]))
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
        found = earlier.differences(entries, wiring.EVENTS)
        if found:
            checks.append(Check("plugin", "warn", earlier.message(f"plugin {plugin_id}", found),
                                f"update the plugin: claude plugin update {plugin_id} (then restart Claude Code)",
                                {"install_path": str(install_path), "differences": found}))
        ready = not plugin_not_ready(env)
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


def plugin_not_ready(env: dict[str, str]) -> bool:
    if os.environ.get("GATE_PYTHON"):
        return False
    stamp = Path(env.get("CLAUDE_PLUGIN_DATA", "")) / "venv" / ".gate-ready"
    try:
        return stamp.read_text(encoding="utf-8").strip() != env.get("CLAUDE_PLUGIN_ROOT")
    except OSError:
        return True
