"""Keeping this machine's settings file out of the project's commits.

`.claude/settings.local.json` names this machine's paths (a local-scope install's interpreter, a project-scope
install's allow rules for gate's absolute spelling). Claude Code ignores it in git only when it creates the file
itself, so where gate writes it and git would commit it (`git add -A`), the install adds it to the project's
`.gitignore`, as projects that use Claude Code do, under a comment line that marks the addition as gate's. The
uninstall that takes gate's content out of that file takes exactly those two lines back (and the `.gitignore`
itself when gate created it and nothing else is left in it).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from gate.install import files

MARK = "# memory-gate: this machine's Claude Code settings (written by gate install), not for committing"


def _pattern(local: Path, root: Path) -> str:
    return "/" + local.relative_to(root).as_posix()  # anchored: this file, not one of that name anywhere


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        return subprocess.run([git, *args], cwd=root, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None


def _top_level(root: Path) -> Path | None:
    """The work tree's top directory, when `root` is in one."""
    done = _git(root, "rev-parse", "--show-toplevel")
    if done is None or done.returncode != 0 or not done.stdout.strip():
        return None
    return Path(done.stdout.strip())


def is_ignored(path: Path, root: Path) -> bool | None:
    """Whether git ignores the path (it need not exist); None outside git, or when git cannot tell."""
    if _top_level(root) is None:
        return None
    done = _git(root, "check-ignore", "-q", "--no-index", str(path))
    if done is None or done.returncode not in (0, 1):
        return None
    return done.returncode == 0


def plan_ignore(local: Path, root: Path) -> tuple[Path, str | None, str] | None:
    """(the .gitignore, its text, its text with the local settings file ignored) where git would commit that file;
    None where it already ignores it, outside git, or when the file lies outside the work tree."""
    top = _top_level(root)
    if top is None or not local.resolve().is_relative_to(top.resolve()) or is_ignored(local, root) is not False:
        return None
    path = top / ".gitignore"
    before = files.read_text(path)
    text = before or ""
    if text and not text.endswith("\n"):
        text += "\n"
    return path, before, f"{text}{MARK}\n{_pattern(local.resolve(), top.resolve())}\n"


def plan_unignore(root: Path) -> tuple[Path, str, str | None] | None:
    """(the .gitignore, its text, its text without the lines gate added: None when gate created the file and
    nothing else is left); None when there is nothing of gate's in it."""
    top = _top_level(root)
    if top is None:
        return None
    path = top / ".gitignore"
    before = files.read_text(path)
    if before is None or MARK not in before:
        return None
    lines = before.splitlines(keepends=True)
    kept: list[str] = []
    skip_next = False
    for line in lines:
        if skip_next:
            skip_next = False
            if line.strip().startswith("/") and line.strip().endswith("settings.local.json"):
                continue
        if line.rstrip("\r\n") == MARK:
            skip_next = True
            continue
        kept.append(line)
    after = "".join(kept)
    if not after.strip() and files.was_created(path):
        return path, before, None
    return path, before, after
