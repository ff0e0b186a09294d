"""How a checkout's project is named (hot path: standard library only, and no git process): the id of its
repository, kept in the repository's common git dir and made on first use, else its directory's path.

gate/paths.py builds every location from the name; gate/project_migrate.py moves the stores of the old names
(one per checkout path) into the project's.
"""

from __future__ import annotations

import os

from gate.memo import cache  # functools.cache without functools (gate/memo.py)

join = os.path.join

try:  # the builtin sha256 spares the hook hashlib's OpenSSL load (~2 ms); same digest
    from _sha2 import sha256 as sha256_builtin  # type: ignore[import-not-found]  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256 as sha256_builtin  # type: ignore[import-not-found,no-redef]  # Python 3.11
    except ImportError:
        from hashlib import sha256 as sha256_builtin  # type: ignore[no-redef]


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
        name, sep, value = line.partition("=")  # a person may add an alias line: spaces around `=` are optional
        name, value = name.strip(), value.strip()
        if not sep or name.startswith("#"):
            continue
        if name == "id" and not key:
            key = value
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
        except OSError:  # a file system without hard links: created exclusively, then written
            fd = os.open(id_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            return text, True
        finally:
            os.unlink(temp)
    except FileExistsError:
        return _read_text(id_path), False
    except OSError:
        return None, False
