"""What `gate doctor` looks at, one module per check: the wiring in every settings file (coverage) and the
plugin (plugin), each hook run once for real (hooks), the store (store), the config (config), the rules
(rules), a mute in force (mute), recent hook failures (errors), the allow rules for gate's own commands
(permissions), other memory tools (competition) and PATH (path). It informs; it changes nothing (except
starting the plugin's first-use setup, which running its hook does by design). Supersession cycles
(supersession) are looked for among the stores' links.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from gate.install.diagnose.base import Check, Settings
from gate.install.diagnose.competition import competitors
from gate.install.diagnose.config import config_health
from gate.install.diagnose.coverage import coverage, settings_wiring
from gate.install.diagnose.errors import clear as clear_errors
from gate.install.diagnose.errors import recent_failures
from gate.install.diagnose.hooks import run_hooks
from gate.install.diagnose.mute import mute_state
from gate.install.diagnose.path import path_info
from gate.install.diagnose.permissions import permission_rules
from gate.install.diagnose.plugin import plugin_wiring
from gate.install.diagnose.rules import rules_health
from gate.install.diagnose.store import store_health
from gate.install.diagnose.supersession import supersession_cycles

__all__ = ["Check", "as_json", "clear_errors", "diagnose"]


def diagnose(root: Path, run: bool = True, agent: str = "claude-code") -> list[Check]:
    """Every check for the agent; Claude Code's also take in Codex's wiring where gate's entries are found there."""
    if agent in ("codex", "gemini"):
        return _host(agent, root, run)
    settings = Settings.read(root)
    wired_settings, checks = settings_wiring(settings)
    wired_plugin, plugin_checks = plugin_wiring(settings, root)
    checks += plugin_checks
    wired = wired_settings + wired_plugin
    checks += coverage(wired, settings.paths.get("project"))
    checks += mute_state(root)
    checks += recent_failures(root)  # before the runs below, whose own failures are reported on their own
    if run:
        checks += run_hooks(wired, root)
    checks += store_health(root)
    checks += supersession_cycles(root)
    checks += config_health(root)
    checks += rules_health(root)
    checks += permission_rules(settings, root)
    checks += competitors(settings, root)
    checks += path_info()
    from gate.hosts.codex.doctor import codex_checks, wired_hooks

    if wired_hooks(root)[0]:
        checks += codex_checks(root, run)
    from gate.hosts.gemini import doctor as gemini

    if gemini.wired_hooks(root)[0]:
        checks += gemini.gemini_checks(root, run)
    return checks


def _host(agent: str, root: Path, run: bool) -> list[Check]:
    """The Codex or Gemini CLI's checks (gate/hosts/<agent>/doctor.py), then those that do not depend on the
    agent."""
    checks = mute_state(root) + recent_failures(root)
    if agent == "codex":
        from gate.hosts.codex.doctor import codex_checks

        checks += codex_checks(root, run)
    else:
        from gate.hosts.gemini.doctor import gemini_checks

        checks += gemini_checks(root, run)
    checks += store_health(root)
    checks += supersession_cycles(root)
    checks += config_health(root)
    checks += rules_health(root)
    return checks


def as_json(checks: list[Check]) -> list[dict[str, Any]]:
    return [asdict(check) for check in checks]
