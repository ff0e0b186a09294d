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

APP_NAME = "memory-gate"
join = os.path.join


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


def _slug(name: str) -> str:
    # [^a-z0-9]+ -> "-", by hand: a regex would cost every hook its compile
    slug = "".join(ch if ch.isascii() and ch.isalnum() else " " for ch in name.lower())
    return "-".join(slug.split())[:40] or "root"


def project_key(root: str | os.PathLike[str]) -> str:
    """The name of a directory's project outside any repository: readable basename plus a hash of its absolute
    path. (Before projects were repositories every project was named so: `gate.project_migrate` finds the
    stores of those names.)"""
    root = os.fspath(root)
    digest = sha256_builtin(root.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"{_slug(os.path.basename(root))}-{digest}"


# The project id of a repository lives in a file of its common git dir. Why there, and not the common dir's
# path or the root commit: the path changes when the checkout is moved or renamed (the file moves with it);
# every worktree shares the common dir (one project for all of them); a repository without commits has no root
# commit, and every fork and clone of a project shares its root commit while their memories are not the same;
# reading the file costs a hook one small read, where the root commit needs git or a walk of its objects.
# Nothing in the git dir is committed or pushed: a fresh clone is a new project, which `gate import` fills.
ID_FILE = "memory-gate-project"
_ID_HEADER = "# memory-gate: the project id of this repository (its memories are kept under this name)\n"


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read(65536)
    except (OSError, UnicodeDecodeError):
        return None


@cache
def git_common_dir(root: str) -> str | None:
    """The common git dir of the checkout at `root` (what `git rev-parse --git-common-dir` answers), read from
    `.git` (a directory, or a worktree's `gitdir:` file) and the git dir's `commondir`, without running git;
    None when `root` is no checkout (no `.git`, or one that leads to no git dir)."""
    dot = join(root, ".git")
    if os.path.isdir(dot):
        git_dir = dot
    else:
        text = _read_text(dot)
        if text is None or not text.startswith("gitdir:"):
            return None
        git_dir = os.path.normpath(join(root, text[len("gitdir:"):].strip()))
        if not os.path.isdir(git_dir):
            return None  # a worktree whose repository is gone, or a stray file: no repository
    common = _read_text(join(git_dir, "commondir"))
    if common is not None and common.strip():
        git_dir = os.path.normpath(join(git_dir, common.strip()))
    return os.path.realpath(git_dir)


def main_checkout(common: str) -> str:
    """The main worktree of a repository (or a bare repository's directory), named after its common dir."""
    return os.path.dirname(common) if os.path.basename(common) == ".git" else common


class Identity:
    """How a project was identified: its id (the `key` of its stores), the way (`repository` by the id file,
    `repository path` when that file can be neither read nor written, `directory` outside any repository),
    the repository's common git dir, and the earlier names of the project (checkout paths whose memories
    joined it when they were migrated)."""

    __slots__ = ("aliases", "created", "how", "key", "repository")

    def __init__(self, key: str, how: str, repository: str | None = None, aliases: tuple[str, ...] = (),
                 created: bool = False) -> None:
        self.key = key
        self.how = how
        self.repository = repository
        self.aliases = aliases
        self.created = created


def parse_id_file(text: str) -> tuple[str, tuple[str, ...]] | None:
    """(id, aliases) of an id file's text, or None when it names no valid id."""
    key, aliases = "", []
    for line in text.splitlines():
        name, sep, value = line.partition(" = ")
        if not sep or line.startswith("#"):
            continue
        if name == "id" and not key:
            key = value.strip()
        elif name == "alias" and value:
            aliases.append(value)
    valid = 0 < len(key) <= 80 and all(ch.isascii() and (ch.isalnum() or ch == "-") for ch in key)
    return (key.lower(), tuple(aliases)) if valid else None


def id_file_text(key: str, aliases: tuple[str, ...] | list[str] = ()) -> str:
    return _ID_HEADER + f"id = {key}\n" + "".join(f"alias = {a}\n" for a in aliases if "\n" not in a)


def identify(root: str) -> Identity:
    """The project of the checkout at `root`: its repository's id (created on first use), else its directory."""
    common = git_common_dir(root)
    if common is None:
        return Identity(project_key(root), "directory")
    id_path = join(common, ID_FILE)
    text = _read_text(id_path)
    if text is None and not os.path.lexists(id_path):
        text, created = _create_id(id_path, _slug(os.path.basename(main_checkout(common)).removesuffix(".git")))
        if text is not None:
            parsed = parse_id_file(text)
            if parsed is not None:
                return Identity(parsed[0], "repository", common, parsed[1], created)
    parsed = parse_id_file(text) if text is not None else None
    if parsed is None:  # unreadable, unwritable or edited into nonsense: the main checkout's path names it
        return Identity(project_key(main_checkout(common)), "repository path", common)
    return Identity(parsed[0], "repository", common, parsed[1])


def _create_id(id_path: str, slug: str) -> tuple[str | None, bool]:
    """Write a new id file, unless another process wrote one first: (the file's text, whether this call made
    it). The id is random: a path would name a later repository at the same place the same."""
    text = id_file_text(f"{slug}-{os.urandom(6).hex()}")
    temp = f"{id_path}.{os.getpid()}.tmp"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        try:
            os.link(temp, id_path)  # never over a file another process placed a moment ago
            return text, True
        except FileExistsError:
            return _read_text(id_path), False
        finally:
            os.unlink(temp)
    except OSError:
        return None, False


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

    __slots__ = ("aliases", "dirs", "how", "key", "repository", "root")

    def __init__(self, root: str | os.PathLike[str], key: str, dirs: UserDirs, *, how: str = "directory",
                 repository: str | None = None, aliases: tuple[str, ...] = ()) -> None:
        self.root = os.fspath(root)
        self.key = key
        self.dirs = dirs
        self.how = how
        self.repository = repository
        self.aliases = aliases
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
        # Stores named the old way (by this checkout's path) join the project on first use: one stat a call,
        # the migration itself only when there is something to move (gate/project_migrate.py).
        if identity.how == "repository" and (
            identity.created or os.path.isdir(join(dirs.data, "projects", project_key(root)))
        ):
            try:
                from gate.project_migrate import migrate

                paths = migrate(paths, scan=identity.created)
            except Exception:  # a failed migration moves nothing it cannot finish; next call retries
                pass
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
