"""Every location gate reads or writes, computed with the standard library only (hot path).

Paths are plain strings (os.path), not pathlib: importing pathlib costs a hook process ~4.5 ms (it pulls in
urllib.parse and ipaddress), a fifth of the floor the hooks are measured against. Code off the hot path
wraps them in Path where that reads better.

Per-user state follows the platform conventions that platformdirs uses for the app name "memory-gate"
(tests/test_paths.py checks that the two agree); `$GATE_HOME` relocates all of it. Nothing a project checks in
can move these locations.

A project is its repository (`identify`): every checkout of one git repository (the main one and each
`git worktree`) is one project, named by an id kept in the repository's common git dir. Outside any
repository a project is the directory gate runs in, named by its absolute path. Anchors and the team store
stay with the checkout (`ProjectPaths.root`, the top-level of the worktree at hand).
"""

from __future__ import annotations

import os
import sys

from gate.memo import cache  # functools.cache without functools (gate/memo.py)
from gate.project_id import ID_FILE as ID_FILE
from gate.project_id import git_common_dir as git_common_dir
from gate.project_id import id_file_text as id_file_text
from gate.project_id import identify as identify
from gate.project_id import main_checkout as main_checkout
from gate.project_id import parse_id_file as parse_id_file
from gate.project_id import project_key as project_key
from gate.project_id import sha256_builtin as sha256_builtin

APP_NAME = "memory-gate"
join = os.path.join




class UserDirs:
    """Where one user's state lives. (Plain classes here: the hook pays for importing dataclasses.)"""

    __slots__ = ("cache", "config", "data", "log", "state")

    def __init__(self, config: str, data: str, state: str, cache: str, log: str) -> None:
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


def _home() -> str:
    return os.path.expanduser("~")


def _xdg(var: str, fallback: str) -> str:
    value = os.environ.get(var, "").strip()
    return value if value else join(_home(), fallback)


# `gate replay` points the state directory (ledgers, audit, logs, mute) at a throwaway directory while it runs,
# so that no gate it replays can touch the user's live state, whatever the gate does; with labelled stores it
# moves every directory, as GATE_HOME does. (kind, directory), innermost last.
_redirects: list[tuple[str, str]] = []


def user_dirs() -> UserDirs:
    """Where this user's config, memories, ledgers and caches live."""
    if not _redirects:
        return _platform_dirs()
    kind, directory = _redirects[-1]
    if kind == "home":
        return _home_dirs(directory)
    dirs = _platform_dirs()
    return UserDirs(dirs.config, dirs.data, directory, dirs.cache, join(directory, "log"))


class _redirect:
    kind = ""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def __enter__(self) -> str:
        _redirects.append((self.kind, self.directory))
        return self.directory

    def __exit__(self, *_: object) -> None:
        _redirects.pop()


class redirect_state(_redirect):
    """`with redirect_state(DIR):` every state path (ledgers, audit, logs, mute) lies under DIR."""

    kind = "state"


class redirect_home(_redirect):
    """`with redirect_home(DIR):` every path lies under DIR, as with GATE_HOME=DIR."""

    kind = "home"


def _home_dirs(root: str) -> UserDirs:
    return UserDirs(join(root, "config"), join(root, "data"), join(root, "state"), join(root, "cache"),
                    join(root, "state", "log"))


def _platform_dirs() -> UserDirs:
    home = os.environ.get("GATE_HOME", "").strip()
    if home:
        return _home_dirs(os.path.expanduser(home))
    if sys.platform == "darwin":
        support = join(_home(), "Library", "Application Support", APP_NAME)
        return UserDirs(
            support,
            support,
            support,
            join(_home(), "Library", "Caches", APP_NAME),
            join(_home(), "Library", "Logs", APP_NAME),
        )
    if sys.platform == "win32":
        local = join(os.environ.get("LOCALAPPDATA") or join(_home(), "AppData", "Local"), APP_NAME, APP_NAME)
        return UserDirs(local, local, local, join(local, "Cache"), join(local, "Logs"))
    state = join(_xdg("XDG_STATE_HOME", join(".local", "state")), APP_NAME)
    return UserDirs(
        join(_xdg("XDG_CONFIG_HOME", ".config"), APP_NAME),
        join(_xdg("XDG_DATA_HOME", join(".local", "share")), APP_NAME),
        state,
        join(_xdg("XDG_CACHE_HOME", ".cache"), APP_NAME),
        join(state, "log"),
    )


@cache
def _find_project_root(start: str) -> str:
    candidate = start
    while True:
        if os.path.exists(join(candidate, ".git")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return start
        candidate = parent


def project_root(cwd: str | os.PathLike[str] | None = None) -> str:
    """The checkout of a directory: its git top-level (found by walking up to `.git`), else the directory."""
    start = os.fspath(cwd) if cwd else os.getcwd()
    try:
        start = os.path.realpath(start)
    except OSError:
        start = os.path.abspath(start)
    return _find_project_root(start)


# root -> the names its project's memories may carry in their `project` field (see owns)
_known: dict[str, tuple[str, ...]] = {}


def owns(root: str | os.PathLike[str], project: str) -> bool:
    """Whether a memory whose `project` field says `project` belongs to the project of the checkout `root`:
    no project (a team memory), the project's id, this checkout's path, or an earlier name of it (the path of
    a checkout whose memories were migrated into it)."""
    root = os.fspath(root)
    return not project or project == root or project in _known.get(root, ())


class ProjectPaths:
    """All locations that concern one project, for one user. `root` is the checkout at hand (a worktree's own
    top-level): anchors are relative to it and its `.gate/` holds the team store and config. `key` is the
    project's id: private memories, history and the index live under it, shared by every checkout."""

    __slots__ = ("aliases", "dirs", "how", "key", "migration_error", "repository", "root")

    def __init__(self, root: str | os.PathLike[str], key: str, dirs: UserDirs, *, how: str = "directory",
                 repository: str | None = None, aliases: tuple[str, ...] = ()) -> None:
        self.root = os.fspath(root)
        self.key = key
        self.dirs = dirs
        self.how = how
        self.repository = repository
        self.aliases = aliases
        self.migration_error: BaseException | None = None  # why old stores did not join (logged by the hook)
        _known[self.root] = (key, *aliases)

    def __repr__(self) -> str:
        return f"ProjectPaths(root={self.root!s}, key={self.key})"

    def owns(self, project: str) -> bool:
        """Whether a memory's `project` field names this project (see `owns`)."""
        return not project or project == self.root or project == self.key or project in self.aliases

    @classmethod
    def for_cwd(cls, cwd: str | os.PathLike[str] | None = None) -> ProjectPaths:
        root = project_root(cwd)
        identity = identify(root)
        dirs = user_dirs()
        paths = cls(root=root, key=identity.key, dirs=dirs, how=identity.how, repository=identity.repository,
                    aliases=identity.aliases)
        # Stores named the old way (by this checkout's path, or by a path the id file names as an alias) join
        # the project on first use: a stat or two a call, the migration itself only when there is something to
        # move (gate/project_migrate.py).
        if identity.how == "repository" and (identity.created or any(
            os.path.isdir(join(dirs.data, "projects", project_key(path))) for path in (root, *identity.aliases)
        )):
            try:
                from gate.project_migrate import migrate

                aliases = migrate(dirs.data, dirs.state, root, identity.key, identity.repository or "",
                                  identity.aliases, scan=identity.created)
                if aliases != identity.aliases:
                    paths = cls(root=root, key=identity.key, dirs=dirs, how=identity.how,
                                repository=identity.repository, aliases=aliases)
            except Exception as error:  # nothing half moved is lost (see there); the next call tries again
                paths.migration_error = error
        return paths

    @property
    def identified_as(self) -> str:
        """How the project was identified, in words (`gate doctor`)."""
        if self.how == "repository":
            common = self.repository or ""
            return f"the repository {main_checkout(common)} (its id is in {join(common, ID_FILE)})"
        if self.how == "repository path":
            return (f"the path of the repository {main_checkout(self.repository or '')} (its id file "
                    f"{join(self.repository or '', ID_FILE)} could not be read or written)")
        return "the directory (not in a git repository)"

    # --- memory stores, one directory per scope -------------------------------------------------------------
    @property
    def private_store(self) -> str:
        return join(self.dirs.data, "projects", self.key, "memories")

    @property
    def team_store(self) -> str:
        return join(self.root, ".gate", "memories")

    @property
    def user_store(self) -> str:
        return join(self.dirs.data, "user", "memories")

    def store_for_scope(self, scope: str) -> str:
        return {"private": self.private_store, "team": self.team_store, "user": self.user_store}[scope]

    @property
    def project_marker(self) -> str:
        """Records which directory a private store belongs to (for stats across projects)."""
        return join(self.dirs.data, "projects", self.key, "project.json")

    # --- derived and per-session state ------------------------------------------------------------------------
    @property
    def index_dir(self) -> str:
        return join(self.dirs.cache, "index", self.key)

    @property
    def project_config(self) -> str:
        return join(self.root, ".gate", "config.toml")


def user_config_file() -> str:
    return join(user_dirs().config, "config.toml")


def sessions_dir() -> str:
    return join(user_dirs().state, "sessions")


def audit_log_file() -> str:
    return join(user_dirs().state, "audit.jsonl")


def error_log_file() -> str:
    return join(user_dirs().log, "errors.log")


def replace_file(path: str, content: str | bytes) -> None:
    """Give `path` this content whole: written beside it as `.NAME.PID.tmp` (0600), then renamed over it, so a
    reader sees the old file or the new one, never a part (ledgers, manifests, cue shards, rule snapshots)."""
    directory, name = os.path.split(path)
    temp = join(directory, f".{name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(content if isinstance(content, bytes) else content.encode("utf-8"))
    os.replace(temp, path)


def ensure_private_dir(path: str | os.PathLike[str]) -> str:
    """Create a directory (and missing parents) readable by this user only."""
    path = os.fspath(path)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except FileExistsError:
        if not os.path.isdir(path):
            raise
    try:
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o700)
    except OSError:
        pass
    return path


def background_python(module: str, *args: str) -> list[str]:
    """The argv of a detached child running `module.main(args)` with this process's imports: the same sys.path
    (a hook runs under `-I -S` with an explicit one, gate/install/launcher.py; the bench's snapshot of another
    gate is on it), and `-I` so the project's cwd cannot put its own `gate/` package first."""
    import json

    code = f"import sys; sys.path[:] = {json.dumps(sys.path)}; from {module} import main; sys.exit(main(sys.argv[1:]))"
    return [sys.executable, "-I", "-S", "-c", code, *args]
