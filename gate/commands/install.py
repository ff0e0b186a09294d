"""`gate install`: wire gate's hooks into a Claude Code settings file, and allow gate's own commands there (the
ones its messages tell the agent to run) without an approval prompt, keeping every other byte of the file."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from gate import render
from gate.errors import GateError
from gate.install import commands, files, launcher, permissions, wiring


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "install",
        help="wire gate's hooks into Claude Code settings (or the Codex CLI's hooks.json: --agent codex; the Gemini "
        "CLI's settings.json: --agent gemini)",
        description=(
            "Merge gate's hook entries into .claude/settings.json (project, the default), "
            ".claude/settings.local.json (local) or ~/.claude/settings.json (user). Every other key and hook "
            "stays as it is; the previous file is backed up under gate's state directory. Safe to run again. "
            "Project scope (usually committed) wires a command that names no path of this machine: it runs "
            "~/.local/share/memory-gate/hook, this machine's launcher, which project-scope installs write; where "
            "there is none (a teammate without gate) the hooks exit 0, and at session start Claude Code shows one "
            "line saying gate is not installed. "
            "It also adds permissions.allow rules that let the agent run gate search, show, remember and verify "
            "without an approval prompt (nothing else: a command chained to one of them still asks). Project scope "
            "writes them as `gate`; when gate is not on PATH, so that its messages name it by absolute path, that "
            "spelling's rules go into .claude/settings.local.json (this machine's) too. "
            "--agent codex wires the Codex CLI instead: .codex/hooks.json (project) or ~/.codex/hooks.json (user), "
            "and the allow rules in ~/.codex/rules/memory-gate.rules (docs/install-codex.md). --agent gemini wires the "
            "Gemini CLI: the hooks key of .gemini/settings.json (project) or ~/.gemini/settings.json (user), and the "
            "allow rules in ~/.gemini/policies/memory-gate.toml (docs/install-gemini.md)."
        ),
    )
    parser.add_argument(
        "--agent", choices=AGENTS, default="claude-code",
        help="the coding agent to wire (default: claude-code; codex: the Codex CLI, its .codex/hooks.json; gemini: "
        "the Gemini CLI, its .gemini/settings.json)",
    )
    parser.add_argument(
        "--scope", choices=files.SCOPES, default="project",
        help="which settings file (default: project; Codex, Gemini: project or user)",
    )
    parser.add_argument("--project", metavar="DIR", help="the project (default: the project of the cwd)")
    parser.add_argument("--dry-run", action="store_true", help="print the diff that would be applied; write nothing")
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="the interpreter the hooks run (default: the one running gate now, by absolute path)",
    )
    parser.add_argument(
        "--launcher-only",
        action="store_true",
        help="write only this machine's hook launcher (what committed project settings run); no settings file",
    )
    parser.add_argument(
        "--permissions-only",
        action="store_true",
        help="add only the allow rules for gate's own commands, no hooks (with the plugin, which wires the hooks "
        "but cannot add permission rules)",
    )
    parser.set_defaults(func=run)


AGENTS = ("claude-code", "codex", "gemini")


def run(args: argparse.Namespace) -> int:
    python = args.python or wiring.default_python()
    commands.check_interpreter(python)
    if args.agent == "codex" and not args.launcher_only:
        return _install_codex(args, python)
    if args.agent == "gemini" and not args.launcher_only:
        return _install_gemini(args, python)
    if args.launcher_only:
        _write_launcher(python, args.dry_run)
        return 0
    root = commands.resolve_project(args.project)
    plan = commands.plan_install(args.scope, root, python, hooks=not args.permissions_only)
    # Planned before anything is written: an invalid local file refuses the whole command.
    machine = commands.plan_machine_rules(root, python) if args.scope == "project" else None
    local = next((p for p in (plan, machine) if p is not None and p.scope == "local"), None)
    if args.dry_run:
        if plan.changes:
            sys.stdout.write(plan.diff())
        else:
            print(f"gate is already wired in {plan.path}; nothing to change")
        if machine is not None and machine.changes:
            sys.stdout.write(machine.diff())
        if local is not None and (ignore := commands.plan_ignore_local(root, local.after)) is not None:
            sys.stdout.write(ignore.diff())
        if args.scope == "project" and not args.permissions_only:
            _write_launcher(python, dry_run=True)
        return 0
    result = commands.apply(plan)
    if args.permissions_only:
        _say_rules(plan, result.changed, args.scope, python)
        _apply_machine_rules(machine, python)
        _ignore_local(root, local)
        for note in plan.notes:
            print(note, file=sys.stderr)
        return 0
    portable = args.scope == "project"  # project scope wires the portable commands (wiring.commands_for)
    if result.changed:
        print(f"wired {', '.join(wiring.EVENT_NAMES)} into {plan.path} ({args.scope} scope)")
        if portable:
            print(f"hooks run: ~/{launcher.RELATIVE}, this machine's launcher (the command names no machine's path)")
        else:
            print(f"hooks run: {wiring.hook_command(python)}")
        print(_rules_line(args.scope, python))
        if result.backup:
            print(f"previous file saved as {result.backup}")
    else:
        print(f"gate is already wired in {plan.path}; nothing changed")
    _apply_machine_rules(machine, python)
    _ignore_local(root, local)
    if portable:
        _write_launcher(python, dry_run=False, quiet_if_unchanged=True)  # install.sh wrote it a moment ago
    for note in plan.notes:
        print(note, file=sys.stderr)
    # a path that works without PATH, and the project by name: run in another directory (install.sh's checkout),
    # a bare `gate doctor` checks that directory and suggests wiring it
    print(f"check it with: {render.gate_command()} doctor --project {shlex.quote(str(root))}", file=sys.stderr)
    return 0


def _apply_machine_rules(machine: commands.Plan | None, python: str) -> None:
    """Write the local allow rules for the absolute spelling a project-scope install needs on this machine."""
    if machine is None:
        return
    result = commands.apply(machine)
    if result.changed:
        spelled = commands.absolute_spelling(python)
        print(f"gate is not on PATH, so its messages name it as {spelled}: allowed that spelling on this machine in "
              f"{machine.path} (local scope, not for committing); with gate on PATH the committed rules do")
    for note in machine.notes:
        print(note, file=sys.stderr)


def _ignore_local(root: Path, local: commands.Plan | None) -> None:
    """The local settings file names this machine's paths: where git would commit it, add it to .gitignore."""
    if local is None or (ignore := commands.plan_ignore_local(root, local.after)) is None:
        return
    commands.apply(ignore)
    print(f"added {ignore.after.splitlines()[-1] if ignore.after else ''} to {ignore.path}: it names this machine's "
          "paths and stays out of commits (gate uninstall takes the line back)")


def _rules_line(scope: str, python: str) -> str:
    spelled = permissions.prefixes(scope, python)
    names = ", ".join(f"`{spelled[0]} {sub}`" for sub in permissions.SUBCOMMANDS)
    also = f" (also as {', '.join(spelled[1:])})" if len(spelled) > 1 else ""
    return f"allowed without an approval prompt: {names}{also}; a command chained to one of them still asks"


def _say_rules(plan: commands.Plan, changed: bool, scope: str, python: str) -> None:
    if changed:
        print(f"added the allow rules for gate's commands to {plan.path} ({scope} scope)")
        print(_rules_line(scope, python))
    else:
        print(f"the allow rules for gate's commands are already in {plan.path}; nothing changed")


def _write_launcher(python: str, dry_run: bool, quiet_if_unchanged: bool = False) -> None:
    path = launcher.path()
    if launcher.interpreter() == python and launcher.text(python) == files.read_text(path):
        if not quiet_if_unchanged:
            print(f"this machine's hook launcher {path} runs {python}; nothing changed")
    elif dry_run:  # on stderr: stdout is the diff
        print(f"would write this machine's hook launcher {path}, running {python}", file=sys.stderr)
    else:
        launcher.write(python)
        print(f"wrote this machine's hook launcher {path}: it runs {python}")


def _install_codex(args: argparse.Namespace, python: str) -> int:
    """`gate install --agent codex`: .codex/hooks.json (project) or ~/.codex/hooks.json (user), and the allow rules
    for gate's commands in ~/.codex/rules/ (gate/hosts/codex/install.py)."""
    from gate.hosts.codex import install as codex

    return _install_agent(
        args, python, codex, "codex", "Codex",
        "Codex runs a new or changed hook only once you have reviewed it: start codex in the project and approve "
        "gate's hooks in /hooks (once; a project's hooks also need the project trusted)",
        absolute=True,
    )


def _install_gemini(args: argparse.Namespace, python: str) -> int:
    """`gate install --agent gemini`: the hooks key of .gemini/settings.json (project) or ~/.gemini/settings.json
    (user), and the allow rules for gate's commands in ~/.gemini/policies/ (gate/hosts/gemini/install.py)."""
    from gate.hosts.gemini import install as gemini

    return _install_agent(
        args, python, gemini, "gemini", "Gemini",
        "Gemini runs these hooks only in a trusted folder: trust this one when gemini asks (the project's hooks and "
        "yours alike)",
        absolute=False,
    )


def _install_agent(args: argparse.Namespace, python: str, host: Any, agent: str, title: str, approve: str, *,
                   absolute: bool) -> int:
    """Another agent's install: its hooks file and its allow rules (the host's plan_install), then what only the
    user can do there (`approve`). Codex's shell may not find `gate` on its PATH: the check names it absolutely."""
    if args.permissions_only:
        raise GateError("--permissions-only is for Claude Code's plugin", f"gate install --agent {agent} wires both")
    root = commands.resolve_project(args.project)
    plans = host.plan_install(args.scope, root, python)
    if args.dry_run:
        for plan in plans:
            sys.stdout.write(plan.diff() if plan.changes else f"nothing to change in {plan.path}\n")
        if args.scope == "project":
            _write_launcher(python, dry_run=True)
        return 0
    hooks, rules = plans
    if commands.apply(hooks).changed:
        print(f"wired {', '.join(host.EVENT_NAMES)} into {hooks.path} ({title}, {args.scope} scope)")
    else:
        print(f"gate is already wired in {hooks.path}; nothing changed")
    if commands.apply(rules).changed:
        print(f"allowed gate's commands ({', '.join(permissions.SUBCOMMANDS)}) in {title}: {rules.path}")
    if args.scope == "project":
        _write_launcher(python, dry_run=False, quiet_if_unchanged=True)
    print(approve, file=sys.stderr)
    gate = render.gate_command(python, absolute=True) if absolute else render.gate_command(python)
    print(f"check it with: {gate} doctor --agent {agent} --project {shlex.quote(str(root))}", file=sys.stderr)
    return 0
