"""Every location gate reads or writes, computed with the standard library only (hot path).

Per-user state follows the platform conventions that platformdirs uses for the app name "memory-gate"
(tests/test_paths.py checks that the two agree); `$GATE_HOME` relocates all of it. A project is its git
top-level, else the directory itself. Nothing a project checks in can move these locations.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cache
from pathlib import Path

APP_NAME = "memory-gate"


try:  # the builtin sha256 spares the hook hashlib's OpenSSL load (~2 ms); same digest
    from _sha2 import sha256 as sha256_builtin  # type: ignore[import-not-found]  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256 as sha256_builtin  # type: ignore[import-not-found,no-redef]  # Python 3.11
    except ImportError:
        from hashlib import sha256 as sha256_builtin  # type: ignore[no-redef]


class UserDirs:
    """Where one user's state lives. (Plain classes here: the hook pays for importing dataclasses.)"""

    __slots__ = ("cache", "config", "data", "log", "state")

    def __init__(self, config: Path, data: Path, state: Path, cache: Path, log: Path) -> None:
        self.config = config
        self.data = data
        self.state = state
        self.cache = cache
        self.log = log

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UserDirs) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, n) for n in self.__slots__))

    def __repr__(self) -> str:
        return "UserDirs(" + ", ".join(f"{n}={getattr(self, n)!s}" for n in self.__slots__) + ")"


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var, "").strip()
    return Path(value) if value else Path.home() / fallback


def user_dirs() -> UserDirs:
    """Where this user's config, memories, ledgers and caches live."""
    home = os.environ.get("GATE_HOME", "").strip()
    if home:
        root = Path(home).expanduser()
        return UserDirs(root / "config", root / "data", root / "state", root / "cache", root / "state" / "log")
    if sys.platform == "darwin":
        support = Path.home() / "Library" / "Application Support" / APP_NAME
        return UserDirs(
            support,
            support,
            support,
            Path.home() / "Library" / "Caches" / APP_NAME,
            Path.home() / "Library" / "Logs" / APP_NAME,
        )
    if sys.platform == "win32":
        local = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / APP_NAME / APP_NAME
        return UserDirs(local, local, local, local / "Cache", local / "Logs")
    state = _xdg("XDG_STATE_HOME", ".local/state") / APP_NAME
    return UserDirs(
        _xdg("XDG_CONFIG_HOME", ".config") / APP_NAME,
        _xdg("XDG_DATA_HOME", ".local/share") / APP_NAME,
        state,
        _xdg("XDG_CACHE_HOME", ".cache") / APP_NAME,
        state / "log",
    )


@cache
def _find_project_root(start: str) -> str:
    here = Path(start)
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return str(candidate)
    return str(here)


def project_root(cwd: str | os.PathLike[str] | None = None) -> Path:
    """The project of a directory: its git top-level (found by walking up to `.git`), else the directory."""
    start = Path(cwd) if cwd else Path.cwd()
    try:
        start = start.resolve()
    except OSError:
        start = start.absolute()
    return Path(_find_project_root(str(start)))


def project_key(root: Path) -> str:
    """A stable directory name for a project: readable basename plus a hash of its absolute path."""
    slug = re.sub(r"[^a-z0-9]+", "-", root.name.lower()).strip("-")[:40] or "root"
    digest = sha256_builtin(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"{slug}-{digest}"


class ProjectPaths:
    """All locations that concern one project, for one user."""

    __slots__ = ("dirs", "key", "root")

    def __init__(self, root: Path, key: str, dirs: UserDirs) -> None:
        self.root = root
        self.key = key
        self.dirs = dirs

    def __repr__(self) -> str:
        return f"ProjectPaths(root={self.root!s}, key={self.key})"

    @classmethod
    def for_cwd(cls, cwd: str | os.PathLike[str] | None = None) -> ProjectPaths:
        root = project_root(cwd)
        return cls(root=root, key=project_key(root), dirs=user_dirs())

    # --- memory stores, one directory per scope -------------------------------------------------------------
    @property
    def private_store(self) -> Path:
        return self.dirs.data / "projects" / self.key / "memories"

    @property
    def team_store(self) -> Path:
        return self.root / ".gate" / "memories"

    @property
    def user_store(self) -> Path:
        return self.dirs.data / "user" / "memories"

    def store_for_scope(self, scope: str) -> Path:
        return {"private": self.private_store, "team": self.team_store, "user": self.user_store}[scope]

    @property
    def project_marker(self) -> Path:
        """Records which directory a private store belongs to (for stats across projects)."""
        return self.dirs.data / "projects" / self.key / "project.json"

    # --- derived and per-session state ------------------------------------------------------------------------
    @property
    def index_dir(self) -> Path:
        return self.dirs.cache / "index" / self.key

    @property
    def project_config(self) -> Path:
        return self.root / ".gate" / "config.toml"


def user_config_file() -> Path:
    return user_dirs().config / "config.toml"


def sessions_dir() -> Path:
    return user_dirs().state / "sessions"


def audit_log_file() -> Path:
    return user_dirs().state / "audit.jsonl"


def error_log_file() -> Path:
    return user_dirs().log / "errors.log"


def ensure_private_dir(path: Path) -> Path:
    """Create a directory (and missing parents) readable by this user only."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(0o700)
    except OSError:
        pass
    return path
