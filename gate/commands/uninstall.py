"""`gate uninstall`: remove exactly gate's hook entries (found by their marker) and its allow rules for its own
commands (found by their shape), and nothing else."""

from __future__ import annotations

import argparse
import sys

from gate.install import commands, files


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "uninstall",
        help="remove gate's hooks from Claude Code settings",
        description=(
            "Remove gate's hook entries (recognised by their `# memory-gate` marker) from a settings file, "
            "with any event list or matcher group that only they filled, and the permissions.allow rules gate "
            "added for its own commands (Bash(gate search *) and the like). Everything else stays byte for byte; "
            "the previous file is backed up under gate's state directory. Memories are not touched. In project scope, "
            "also the allow rules a project-scope install put in .claude/settings.local.json for gate's absolute "
            "spelling (where that file wires no gate hooks of its own). The line an install added to the project's "
            ".gitignore for .claude/settings.local.json goes once that file holds nothing of gate's. --agent codex: "
            "gate's entries in the Codex CLI's hooks.json, and at user scope its rules file "
            "~/.codex/rules/memory-gate.rules. --agent gemini: gate's entries in the Gemini CLI's settings.json, and "
            "at user scope its policy file ~/.gemini/policies/memory-gate.toml."
        ),
    )
    parser.add_argument(
        "--scope",
        choices=(*files.SCOPES, "all"),
        default="project",
        help="which settings file (default: project; all: every scope)",
    )
    parser.add_argument("--project", metavar="DIR", help="the project (default: the project of the cwd)")
    parser.add_argument("--dry-run", action="store_true", help="print the diff that would be applied; write nothing")
    parser.add_argument(
        "--agent", choices=("claude-code", "codex", "gemini"), default="claude-code",
        help="the coding agent (default: claude-code; codex: .codex/hooks.json, and at user scope gate's rules file; "
        "gemini: .gemini/settings.json, and at user scope gate's policy file)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = commands.resolve_project(args.project)
    if args.agent in ("codex", "gemini"):
        if args.agent == "codex":
            from gate.hosts.codex import install as host
        else:
            from gate.hosts.gemini import install as host  # type: ignore[no-redef]
        if args.scope == "local":
            from gate.errors import GateError

            raise GateError(f"{args.agent.capitalize()} has no local scope", "use --scope project, user or all")
        scopes = host.SCOPES if args.scope == "all" else (args.scope,)
        plans = [plan for scope in scopes for plan in host.plan_uninstall(scope, root)]
    else:
        scopes = files.SCOPES if args.scope == "all" else (args.scope,)
        # Plan every scope first: an invalid file anywhere refuses the whole command before anything is written.
        plans = [commands.plan_uninstall(scope, root) for scope in scopes]
    if args.agent == "claude-code" and scopes == ("project",) \
            and (machine := commands.plan_uninstall_machine_rules(root)) is not None:
        plans.append(machine)  # the local allow rules a project-scope install added for gate's absolute spelling
    local = [plan for plan in plans if plan.scope == "local"]
    # gate's content leaves the local settings: so does the line its install added to .gitignore
    if local and local[-1].changes and (unignore := commands.plan_unignore_local(root, local[-1].after)):
        plans.append(unignore)
    for plan in plans:
        if not plan.changes:
            print(f"no gate hooks or rules in {plan.path}")
            continue
        if args.dry_run:
            sys.stdout.write(plan.diff())
            continue
        result = commands.apply(plan)
        if plan.scope == "gitignore":
            action = "removed the file (gate had created it)" if result.removed else "removed the line gate added"
        else:
            action = "removed the file (gate had created it)" if result.removed else "removed gate's hooks and rules"
        print(f"{plan.path}: {action}")
        if result.backup:
            print(f"previous file saved as {result.backup}")
    return 0
