"""Claude Code settings files: where each scope lives, and how gate reads and rewrites them safely."""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from gate.errors import GateError
from gate.install import jsonedit
from gate.paths import ensure_private_dir, project_key, user_dirs

SCOPES: tuple[str, ...] = ("project", "local", "user")
BACKUPS_KEPT = 10


def claude_config_dir() -> Path:
    """~/.claude, or wherever CLAUDE_CONFIG_DIR moves it (Claude Code honours that variable)."""
    override = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(override).expanduser() if override else Path.home() / ".claude"


def settings_path(scope: str, project_root: Path) -> Path:
    if scope == "project":
        return project_root / ".claude" / "settings.json"
    if scope == "local":
        return project_root / ".claude" / "settings.local.json"
    if scope == "user":
        return claude_config_dir() / "settings.json"
    raise GateError(f"unknown scope {scope!r}", f"use one of: {', '.join(SCOPES)}")


def all_settings_paths(project_root: Path) -> dict[str, Path]:
    """The three files Claude Code merges for a session in this project, by scope."""
    return {scope: settings_path(scope, project_root) for scope in SCOPES}


def read_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as error:
        raise GateError(
            f"{path} is not UTF-8 text ({error.reason} at byte {error.start}); nothing was changed",
            "Claude Code ignores a settings file it cannot read; fix or remove it, then run this again",
        ) from None


def invalid_json_error(path: Path, error: jsonedit.JSONSyntaxError) -> GateError:
    return GateError(
        f"{path} is not valid JSON: {error}; nothing was changed",
        "Claude Code silently ignores a settings file with a syntax error, so fix it first "
        f"(e.g. `python3 -m json.tool {path}` points at the spot), then run this again",
    )


def check_json(path: Path, text: str) -> None:
    """Refuse, with the spot and a hint, a file that Claude Code itself would not read."""
    try:
        jsonedit.loads_strict(text.removeprefix("\ufeff"))
    except jsonedit.JSONSyntaxError as error:
        raise invalid_json_error(path, error) from None


def unified_diff(path: Path, before: str | None, after: str | None) -> str:
    old = (before or "").splitlines(keepends=True)
    new = (after or "").splitlines(keepends=True)
    diff = difflib.unified_diff(
        old,
        new,
        fromfile=str(path) if before is not None else "/dev/null",
        tofile=str(path) if after is not None else "/dev/null",
    )
    lines = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff]
    return "".join(lines)


# --- state kept about installs: backups, files gate created -------------------------------------------------


def _install_state_dir() -> Path:
    return Path(user_dirs().state, "install")


def backup_dir_for(path: Path) -> Path:
    return _install_state_dir() / "backups" / project_key(path)


def _created_record() -> Path:
    return _install_state_dir() / "created.json"


def _read_created() -> list[str]:
    try:
        data = json.loads(_created_record().read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return []
    return [item for item in data if isinstance(item, str)] if isinstance(data, list) else []


def _write_created(paths: list[str]) -> None:
    record = _created_record()
    ensure_private_dir(record.parent)
    record.write_text(json.dumps(sorted(set(paths)), indent=2) + "\n", encoding="utf-8")


def remember_created(path: Path) -> None:
    """Note that gate created this file, so that uninstall may remove it again once it is empty."""
    _write_created([*_read_created(), str(path)])


def was_created(path: Path) -> bool:
    return str(path) in _read_created()


def forget_created(path: Path) -> bool:
    """Whether gate had created this file; the note is dropped either way."""
    known = _read_created()
    if str(path) not in known:
        return False
    _write_created([item for item in known if item != str(path)])
    return True


def backup(path: Path, text: str) -> Path:
    """Keep the previous content under the state dir (not beside the file: no litter in the repo)."""
    directory = Path(ensure_private_dir(backup_dir_for(path)))
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = directory / f"{stamp}-{path.name}"
    target.write_text(text, encoding="utf-8")
    (directory / "ORIGIN").write_text(str(path) + "\n", encoding="utf-8")
    old = sorted(p for p in directory.iterdir() if p.name != "ORIGIN")
    for stale in old[:-BACKUPS_KEPT]:
        with contextlib.suppress(OSError):
            stale.unlink()
    return target


# --- writing ------------------------------------------------------------------------------------------------


@dataclass
class WriteResult:
    path: Path
    changed: bool
    backup: Path | None = None
    removed: bool = False


def _real_target(path: Path) -> Path:
    """Write through a symlink (dotfile managers link settings.json) instead of replacing the link."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def atomic_write(path: Path, text: str) -> None:
    """Write to a temp file beside the target, then rename: a crash leaves the old file or the new, never half."""
    target = _real_target(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        # mkstemp creates 0600; a new settings file should get the usual umask-based mode instead.
        umask = os.umask(0o022)
        os.umask(umask)
        mode = 0o666 & ~umask
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def replace_text(path: Path, before: str | None, after: str | None) -> WriteResult:
    """Move the file from `before` to `after` (None: absent), refusing if someone changed it meanwhile."""
    if before == after:
        return WriteResult(path, changed=False)
    if read_text(path) != before:
        raise GateError(
            f"{path} changed while gate was editing it; nothing was written",
            "run the command again",
        )
    saved = backup(path, before) if before is not None else None
    if after is None:
        _real_target(path).unlink()
        return WriteResult(path, changed=True, backup=saved, removed=True)
    atomic_write(path, after)
    return WriteResult(path, changed=True, backup=saved)
