"""Where Claude Code keeps a project's things (cold path): its sessions' transcripts (`gate replay`), its auto
memory and its CLAUDE.md (`gate import --from`), found the way Claude Code 2.1.332 finds them.

A project's transcripts are `<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<key>/<session id>.jsonl`, the key made
from the project's path as below.

Read from the CLI's bundled code and confirmed by running it against a scripted model server (each rule below
is one that a session's system prompt showed): the auto-memory directory is

1. `autoMemoryDirectory` from the first settings file that sets it, in this order: managed settings,
   .claude/settings.local.json, .claude/settings.json, the user's settings.json (a leading `~/` is the home
   directory; a value that is not an absolute path of 3 characters or more means the default, it does not
   fall through to the next file). Claude Code reads the two project files only in a folder whose trust was
   accepted, or in `claude -p`;
2. otherwise `<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<key>/memory/`, where the key is the project's path
   with every character but A-Z, a-z and 0-9 turned into '-' (past 200 characters: cut, plus a hash). The
   path is the git root of the project, and for a linked worktree the main worktree's root: every worktree
   of a repository shares one auto memory.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from gate.install.files import claude_config_dir

INDEX = "MEMORY.md"  # the index Claude Code loads at session start, not a memory
KEY_MAX = 200  # Claude Code cuts a project key here and appends a hash of the whole path


@dataclass(frozen=True)
class Located:
    path: Path
    how: str  # why this directory: which setting, or the default for which root


def managed_settings_file() -> Path:
    if sys.platform == "darwin":
        return Path("/Library/Application Support/ClaudeCode/managed-settings.json")
    return Path("/etc/claude-code/managed-settings.json")


def _setting(path: Path, key: str) -> object:
    """A top-level value of a settings file; None when the file is missing or unreadable (Claude Code ignores
    such a file as a whole) or the key is unset."""
    try:
        data = json.loads(path.read_text(encoding="utf-8").removeprefix("\ufeff"))
    except (OSError, ValueError):
        return None
    return data.get(key) if isinstance(data, dict) else None


def _directory_setting(value: object, *, expand_home: bool = True) -> Path | None:
    """An autoMemoryDirectory value as Claude Code accepts it, or None (then it uses the default)."""
    if not isinstance(value, str) or not value or "\x00" in value:
        return None
    text = value
    if expand_home and text.startswith(("~/", "~\\")):
        rest = os.path.normpath(text[2:] or ".")
        if rest in (".", "..") or rest.startswith(".." + os.sep):
            return None  # the home directory itself, or a way out of it
        text = os.path.join(Path.home(), rest)
    path = os.path.normpath(text).rstrip("/\\")
    if not os.path.isabs(path) or len(path) < 3:
        return None
    return Path(path)


def git_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding a `.git` (a directory, or a worktree's file)."""
    for candidate in (start, *start.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def _read_line(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def canonical_root(root: Path) -> Path:
    """For a linked worktree, the main worktree's root (or a bare repository's directory); else `root`.

    A worktree's `.git` file names its git dir (`<common>/worktrees/<name>`), whose `commondir` leads back to
    the common dir and whose `gitdir` points back at this `.git` file: all three must agree."""
    text = _read_line(root / ".git") if (root / ".git").is_file() else None
    if not text or not text.startswith("gitdir:"):
        return root
    git_dir = Path(os.path.normpath(root / text[len("gitdir:") :].strip()))
    common_text = _read_line(git_dir / "commondir")
    back = _read_line(git_dir / "gitdir")
    if not common_text or not back:
        return root
    common = Path(os.path.normpath(git_dir / common_text))
    if git_dir.parent != common / "worktrees":
        return root
    if os.path.realpath(git_dir / back) != os.path.join(os.path.realpath(root), ".git"):
        return root
    return common.parent if common.name == ".git" else common


def _js_string_hash(text: str) -> int:
    """Java's String.hashCode over UTF-16 code units (what Claude Code appends to a cut key), made positive."""
    value = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for index in range(0, len(data), 2):
        value = (value * 31 + int.from_bytes(data[index : index + 2], "little")) & 0xFFFFFFFF
    return abs(value - (1 << 32) if value >= 1 << 31 else value)


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        number, rest = divmod(number, 36)
        text = digits[rest] + text
        if not number:
            return text


def project_key(path: str) -> str:
    """Claude Code's directory name for a project under `projects/`: every UTF-16 code unit that is not an
    ASCII letter or digit becomes '-'; a key over 200 characters is cut and gets a hash of the whole path."""
    key = "".join(ch if ch.isascii() and ch.isalnum() else "-" * (2 if ord(ch) > 0xFFFF else 1) for ch in path)
    if len(key) <= KEY_MAX:
        return key
    return f"{key[:KEY_MAX]}-{_base36(_js_string_hash(path))}"


def _key_override() -> str | None:
    """CLAUDE_CODE_PROJECT_DIR_NAME names the project's directory, but only with CLAUDE_CONFIG_DIR set."""
    name = os.environ.get("CLAUDE_CODE_PROJECT_DIR_NAME", "")
    if not os.environ.get("CLAUDE_CONFIG_DIR") or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
        return None
    return None if re.fullmatch(r"con|prn|aux|nul|com[0-9]|lpt[0-9]", name, re.IGNORECASE) else name


def auto_memory_dir(project_root: Path) -> Located:
    """This project's auto-memory directory, as Claude Code would use it (it may not exist yet)."""
    override = os.environ.get("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", "")
    if override:
        path = _directory_setting(override, expand_home=False)
        if path is not None:
            return Located(path, "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE")
    sources = [
        (managed_settings_file(), str(managed_settings_file())),
        (project_root / ".claude" / "settings.local.json", ".claude/settings.local.json"),
        (project_root / ".claude" / "settings.json", ".claude/settings.json"),
        (claude_config_dir() / "settings.json", str(claude_config_dir() / "settings.json")),
    ]
    for file, name in sources:
        value = _setting(file, "autoMemoryDirectory")
        if value is not None:
            path = _directory_setting(value)
            if path is not None:
                return Located(path, f"autoMemoryDirectory in {name}")
            break  # an unusable value means the default, not the next file
    root = git_root(project_root)
    base = canonical_root(root) if root is not None else project_root
    remote = os.environ.get("CLAUDE_CODE_REMOTE_MEMORY_DIR", "")
    config = Path(remote) if remote else claude_config_dir()
    key = (None if remote else _key_override()) or project_key(str(base))
    where = "the git root" if root is not None and base == root else "the main worktree" if root else "the directory"
    return Located(config / "projects" / key / "memory", f"Claude Code's default for {where} {base}")


def topic_files(directory: Path) -> list[Path]:
    """The memory files of an auto-memory directory, as Claude Code's memory scan finds them: every `*.md`
    beneath it but the MEMORY.md index files."""
    found = []
    for folder, subfolders, names in os.walk(directory):
        subfolders.sort()
        found += [Path(folder) / name for name in sorted(names) if name.endswith(".md") and name != INDEX]
    return found


def project_claude_md(project_root: Path) -> Path | None:
    """The project's CLAUDE.md: ./CLAUDE.md, else ./.claude/CLAUDE.md (Claude Code loads either)."""
    for candidate in (project_root / "CLAUDE.md", project_root / ".claude" / "CLAUDE.md"):
        if candidate.is_file():
            return candidate
    return None


def user_claude_md() -> Path:
    """The user's own CLAUDE.md, loaded in every project."""
    return claude_config_dir() / "CLAUDE.md"


def project_sessions_dir(project: str | os.PathLike[str]) -> Path:
    """The folder of the project's session transcripts (it may not exist)."""
    return claude_config_dir() / "projects" / project_key(os.fspath(project))


def project_transcripts(project: str | os.PathLike[str]) -> list[Path]:
    """The project's session transcripts, oldest first (by modification time)."""
    folder = project_sessions_dir(project)
    files = [p for p in folder.glob("*.jsonl") if p.is_file()] if folder.is_dir() else []
    return sorted(files, key=lambda p: (p.stat().st_mtime, p.name))
