"""Where Claude Code keeps a project's sessions (cold path): its config directory and the folder of each project.

Claude Code's config directory is `$CLAUDE_CONFIG_DIR` or `~/.claude`; a project's transcripts live in
`projects/<the project's absolute path with every character that is not an ASCII letter or digit turned into
"-">/<session id>.jsonl`. A name longer than 200 characters is cut at 200 and given a hash suffix
(read off the 2.1.332 CLI); we find such folders by their 200-character prefix instead of recomputing the hash.
"""

from __future__ import annotations

import os
from pathlib import Path

MAX_FOLDER_NAME = 200


def config_dir() -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def project_folder_name(project: str | os.PathLike[str]) -> str:
    """The folder name Claude Code gives a project path (before any cut at 200 characters)."""
    return "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in os.fspath(project))


def project_sessions_dir(project: str | os.PathLike[str]) -> Path | None:
    """The folder holding the project's transcripts, or None when Claude Code has none for it."""
    projects = config_dir() / "projects"
    name = project_folder_name(project)
    if len(name) <= MAX_FOLDER_NAME:
        folder = projects / name
        return folder if folder.is_dir() else None
    prefix = name[:MAX_FOLDER_NAME] + "-"
    try:
        matches = sorted(p for p in projects.iterdir() if p.is_dir() and p.name.startswith(prefix))
    except OSError:
        return None
    return matches[0] if matches else None


def project_transcripts(project: str | os.PathLike[str]) -> list[Path]:
    """The project's session transcripts, oldest first (by modification time)."""
    folder = project_sessions_dir(project)
    if folder is None:
        return []
    files = [p for p in folder.glob("*.jsonl") if p.is_file()]
    return sorted(files, key=lambda p: (p.stat().st_mtime, p.name))
