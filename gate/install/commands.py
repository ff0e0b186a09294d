"""The work behind `gate install` and `gate uninstall`, separate from argparse so tests can call it."""

from __future__ import annotations

import contextlib
import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path

from gate import render
from gate.errors import GateError
from gate.install import files, gitignore, jsonedit, permissions, wiring
from gate.paths import project_root


def resolve_project(directory: str | None) -> Path:
    if directory is not None and not Path(directory).is_dir():
        raise GateError(f"--project {directory}: no such directory")
    return Path(project_root(directory))


@dataclass
class Plan:
    """What a command would do to one settings file."""

    scope: str
    path: Path
    before: str | None
    after: str | None
    notes: list[str] = field(default_factory=list)

    @property
    def changes(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        return files.unified_diff(self.path, self.before, self.after)


def check_interpreter(python: str) -> None:
    path = Path(python)
    if not path.is_absolute():
        raise GateError(f"the hook interpreter must be an absolute path, got {python!r}")
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise GateError(
            f"the hook interpreter {python} does not exist or is not executable",
            "pass --python with the python of the environment gate is installed in",
        )


def _merge_rules(text: str | None, rules: list[str]) -> str:
    """The text with gate's allow rules (a UTF-8 byte order mark is kept aside and put back)."""
    bom = "\ufeff" if text is not None and text.startswith("\ufeff") else ""
    return bom + permissions.merge(text.removeprefix("\ufeff") if text is not None else None, rules)


def plan_install(scope: str, root: Path, python: str, hooks: bool = True) -> Plan:
    """The hooks and the allow rules for gate's own commands; `hooks=False`: the rules alone (the plugin wires
    the hooks, and cannot add permission rules itself)."""
    path = files.settings_path(scope, root)
    user = files.settings_path("user", root)
    if scope != "user" and os.path.realpath(path) == os.path.realpath(user):
        # the home directory as the project: its .claude/settings.json is the user settings, read by every project
        raise GateError(
            f"{root} is your home directory: its {path.relative_to(root)} is your user settings, which every "
            f"project reads, not {scope} scope; nothing was written",
            hint="run it in your project's directory or name it (gate install --project DIR); to gate every "
            "project on purpose: gate install --scope user",
        )
    before = files.read_text(path)
    if before is not None and before.strip():
        files.check_json(path, before)
    commands = wiring.commands_for(scope, python)
    try:
        after = wiring.merge(before, commands) if hooks else before
        after = _merge_rules(after, permissions.desired_rules(scope, python))
    except wiring.SettingsShapeError as error:
        raise GateError(
            f"{path}: {error}; nothing was changed",
            'Claude Code expects {"hooks": {"EVENT": [{"hooks": [...]}]}}; fix the file, then run this again',
        ) from None
    except permissions.PermissionsShapeError as error:
        raise GateError(
            f"{path}: {error}; nothing was changed",
            'Claude Code expects {"permissions": {"allow": ["RULE", ...]}}; fix the file, then run this again',
        ) from None
    plan = Plan(scope, path, before, after)
    if not hooks:
        return plan
    if importlib.util.find_spec("gate.hook") is None:
        plan.notes.append("warning: gate.hook is missing from this installation; the hooks will fail until it is")
    if scope == "project" and plan.changes:  # said once, when the file is written, not on every re-run
        plan.notes.append(
            f"note: commit {path.name}; on a teammate's machine without gate its hooks do nothing (exit 0; at "
            "session start Claude Code shows them one line saying gate is not installed), and once they have set gate "
            "up it works for them as is"
        )
    plan.notes.extend(_other_wiring_notes(scope, root, set(commands.values())))
    return plan


def _other_wiring_notes(scope: str, root: Path, ours: set[str]) -> list[str]:
    """Warn when gate is already wired elsewhere with another command: Claude Code would run both."""
    notes = []
    for other, path in files.all_settings_paths(root).items():
        if other == scope or path == files.settings_path(scope, root):
            continue
        text = files.read_text(path)
        if not text:
            continue
        try:
            data = jsonedit.loads_strict(text.removeprefix("\ufeff"))
        except jsonedit.JSONSyntaxError:
            continue
        commands = {entry.command for entry in wiring.find_gate_entries(data)}
        if commands - ours:
            notes.append(
                f"warning: {path} ({other} scope) also wires gate with another command, so each hook would run "
                f"twice; remove one with `gate uninstall --scope {other}`"
            )
    return notes


def absolute_spelling(python: str) -> str | None:
    """How gate's messages will name gate for hooks that `python` runs, when that is by absolute path (the choice
    render.gate_command makes in the hook, read here from the installer's PATH, which is the user's); None when
    plain `gate` is it, or no console script lies beside `python` to allow."""
    if permissions.console_script(python) is None:
        return None
    spelled = render.gate_command(python)
    return None if spelled == permissions.PORTABLE else spelled


def plan_machine_rules(root: Path, python: str) -> Plan | None:
    """A project-scope install's companion: the committed file may name no path of this machine, so where gate's
    messages will spell gate by absolute path (`gate` not on PATH), the allow rules for that spelling go into the
    local settings (.claude/settings.local.json, this machine's) — or every gate command the agent is told to run
    would wait for an approval. None when plain `gate` is what the messages say."""
    if absolute_spelling(python) is None:
        return None
    return plan_install("local", root, python, hooks=False)


def holds_gate(text: str | None) -> bool:
    """Whether a settings file's text holds any of gate's hook entries or allow rules."""
    if text is None or not text.strip():
        return False
    try:
        data = jsonedit.loads_strict(text.removeprefix("\ufeff"))
    except jsonedit.JSONSyntaxError:
        return False
    return bool(wiring.find_gate_entries(data) or permissions.gate_rules(data))


def plan_ignore_local(root: Path, local_text: str | None) -> Plan | None:
    """The project's .gitignore with .claude/settings.local.json in it, when that file will hold gate's content
    (`local_text`: its text after the install) and git would commit it; None otherwise."""
    if not holds_gate(local_text):
        return None
    planned = gitignore.plan_ignore(files.settings_path("local", root), root)
    return Plan("gitignore", *planned) if planned else None


def plan_unignore_local(root: Path, local_text: str | None) -> Plan | None:
    """The lines an install added to the .gitignore taken back, once the local settings file holds nothing of
    gate's (`local_text`: its text after the uninstall); None otherwise."""
    if holds_gate(local_text):
        return None
    planned = gitignore.plan_unignore(root)
    return Plan("gitignore", *planned) if planned else None


def plan_uninstall(scope: str, root: Path) -> Plan:
    path = files.settings_path(scope, root)
    before = files.read_text(path)
    if before is None:
        return Plan(scope, path, None, None)
    if not before.strip():
        return Plan(scope, path, before, before)
    files.check_json(path, before)
    after: str | None = wiring.unmerge(before)
    if after is not None:
        bom = "\ufeff" if after.startswith("\ufeff") else ""
        after = bom + permissions.unmerge(after.removeprefix("\ufeff"))
    emptied = after != before and jsonedit.loads_strict(after.removeprefix("\ufeff")) == {}
    if emptied and files.was_created(path):
        # An empty object is what gate's own install left of a file it created: remove the file again.
        after = None
    return Plan(scope, path, before, after)


def plan_uninstall_machine_rules(root: Path) -> Plan | None:
    """A project-scope uninstall's companion: gate's allow rules in the local settings, which a project-scope
    install put there (plan_machine_rules) — only when that file wires no gate hooks of its own (then they belong
    to a local-scope install, which `gate uninstall --scope local` removes). None when there is nothing of gate's."""
    path = files.settings_path("local", root)
    text = files.read_text(path)
    if text is None or not text.strip():
        return None
    try:
        data = jsonedit.loads_strict(text.removeprefix("\ufeff"))
    except jsonedit.JSONSyntaxError:
        return None  # not ours to judge; `gate uninstall --scope local` says what is wrong with it
    if wiring.find_gate_entries(data) or not permissions.gate_rules(data):
        return None
    return plan_uninstall("local", root)


def apply(plan: Plan) -> files.WriteResult:
    parent_existed = plan.path.parent.exists()
    result = files.replace_text(plan.path, plan.before, plan.after)
    if result.changed and plan.before is None:
        files.remember_created(plan.path)
        if not parent_existed:
            files.remember_created(plan.path.parent)
    if result.removed:
        files.forget_created(plan.path)
        if files.was_created(plan.path.parent):
            with contextlib.suppress(OSError):  # not empty: another file is left there (removed later, or not ours)
                plan.path.parent.rmdir()
                files.forget_created(plan.path.parent)
    return result
