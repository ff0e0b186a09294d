"""Stores named the old way join their repository's project, on first use (standard library only: a hook may
be the first use).

Before a project was its repository, a project's private memories, their history and its mute state were kept
under `project_key(checkout path)`, and each memory's `project` field held that path: every worktree and every
moved checkout had a store of its own, which the others never saw. `ProjectPaths.for_cwd` calls `migrate`
whenever a store of that name exists for the checkout at hand (one stat a call), and once more, with `scan`,
when it has just created the repository's id: then the stores of the repository's other checkouts (its main
worktree, every worktree git lists, and Claude Code's removed worktrees under `.claude/worktrees/`) join too.

Nothing is rewritten and nothing is lost: files are moved (a renamed directory, or file by file into a store
that exists already; a file that is there already with the same bytes is dropped as the duplicate it is, one
with other bytes stays where it was), the old checkout path is recorded in the id file as an alias, so the
memories that name it are this project's (`ProjectPaths.owns`), and whatever could not be moved is left in
`<old name>.unmerged`, where `gate doctor` names it.
"""

from __future__ import annotations

import contextlib
import json
import os

from gate.paths import (
    ID_FILE,
    ProjectPaths,
    ensure_private_dir,
    id_file_text,
    join,
    main_checkout,
    parse_id_file,
    project_key,
    replace_file,
)

UNMERGED_SUFFIX = ".unmerged"


def _checkouts(common: str) -> list[str]:
    """Every checkout of the repository git knows of now: the main worktree and each linked one."""
    found = [main_checkout(common)]
    worktrees = join(common, "worktrees")
    try:
        names = sorted(os.listdir(worktrees))
    except OSError:
        names = []
    for name in names:
        try:
            with open(join(worktrees, name, "gitdir"), encoding="utf-8") as handle:
                dot_git = handle.read().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if dot_git:
            found.append(os.path.realpath(os.path.dirname(dot_git)))
    return found


def _removed_claude_worktrees(projects: str, common: str) -> list[str]:
    """Roots of old stores that lay in Claude Code's worktree folder of this repository and are gone (`claude
    --worktree` removes its worktree when the session ends; its memories stayed behind under its path)."""
    prefix = join(main_checkout(common), ".claude", "worktrees") + os.sep
    found = []
    try:
        names = sorted(os.listdir(projects))
    except OSError:
        return []
    for name in names:
        root = _marker_root(join(projects, name))
        if root and root.startswith(prefix) and not os.path.lexists(root):
            found.append(root)
    return found


def _marker_root(store: str) -> str | None:
    try:
        with open(join(store, "project.json"), encoding="utf-8") as handle:
            root = json.load(handle).get("root")
    except (OSError, ValueError, AttributeError):
        return None
    return root if isinstance(root, str) and root else None


def _same_bytes(a: str, b: str) -> bool:
    try:
        with open(a, "rb") as one, open(b, "rb") as other:
            return one.read() == other.read()
    except OSError:
        return False


def _merge(source: str, target: str) -> None:
    """Move every file of `source` into `target` that is not there yet; what is there with the same bytes is
    dropped from `source`, what differs stays in `source`."""
    if not os.path.lexists(target):
        try:
            os.rename(source, target)  # the whole tree at once: nothing can be half moved
            return
        except OSError:
            pass  # another process made it a moment ago: file by file
    ensure_private_dir(target)
    with os.scandir(source) as entries:
        listed = list(entries)
    for entry in listed:
        destination = join(target, entry.name)
        if entry.is_dir(follow_symlinks=False):
            _merge(entry.path, destination)
            continue
        try:
            os.link(entry.path, destination)  # never over a file that is there
        except FileExistsError:
            if not _same_bytes(entry.path, destination):
                continue
        except OSError:
            if os.path.lexists(destination):
                continue
            os.replace(entry.path, destination)
            continue
        os.unlink(entry.path)
    with contextlib.suppress(OSError):  # something stayed: it differed from the project's copy
        os.rmdir(source)


def _add_aliases(paths: ProjectPaths, new: list[str]) -> tuple[str, ...]:
    """Record earlier checkout paths of the project in its id file (read again: another process may have
    added some); the aliases after."""
    id_path = join(paths.repository or "", ID_FILE)
    with open(id_path, encoding="utf-8") as handle:
        parsed = parse_id_file(handle.read())
    if parsed is None or parsed[0] != paths.key:
        return paths.aliases  # the file changed hands meanwhile: leave it to its writer
    aliases = list(parsed[1])
    added = [a for a in dict.fromkeys(new) if a and a not in aliases and a != paths.key and "\n" not in a]
    if added:
        replace_file(id_path, id_file_text(paths.key, aliases + added))
        os.chmod(id_path, 0o644)
    return tuple(aliases + added)


def _lock(projects: str) -> int | None:
    """An exclusive lock over migrations of this user's stores (two hooks of one event run at once)."""
    try:
        import fcntl
    except ImportError:  # no fcntl (Windows): the moves are safe to race, only an alias might be written twice
        return None
    ensure_private_dir(projects)
    fd = os.open(join(projects, ".migrate.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def migrate(paths: ProjectPaths, *, scan: bool = False) -> ProjectPaths:
    """Move the old-named stores of this checkout (and, with `scan`, of every checkout of the repository) into
    the project's; the ProjectPaths that knows their old paths as aliases."""
    projects = join(paths.dirs.data, "projects")
    common = paths.repository or ""
    roots = [paths.root]
    if scan:
        roots += _checkouts(common) + _removed_claude_worktrees(projects, common)
    found = [(root, project_key(root)) for root in dict.fromkeys(roots)]
    found = [(root, key) for root, key in found if key != paths.key and os.path.isdir(join(projects, key))]
    if not found:
        return paths
    lock = _lock(projects)
    try:
        # aliases first: a memory moved before its old path is known would be another project's for a moment
        aliases = _add_aliases(paths, [a for root, key in found for a in (root, _marker_root(join(projects, key)))
                                       if a])
        target = join(projects, paths.key)
        for _, key in found:
            source = join(projects, key)
            if not os.path.isdir(source):
                continue  # another process moved it while this one waited for the lock
            _merge(source, target)
            if os.path.isdir(source) and os.listdir(source) == ["project.json"]:
                os.unlink(join(source, "project.json"))  # the project has its own marker; this path is an alias
                os.rmdir(source)
            if os.path.isdir(source):
                os.rename(source, _free_name(source + UNMERGED_SUFFIX))
            _move_state(paths, key)
        if os.path.isdir(target):  # the marker names a checkout that exists (stats find the team store there)
            replace_file(join(target, "project.json"), json.dumps({"root": paths.root, "id": paths.key}))
    finally:
        if lock is not None:
            os.close(lock)
    return ProjectPaths(paths.root, paths.key, paths.dirs, how=paths.how, repository=paths.repository,
                        aliases=aliases)


def _free_name(path: str) -> str:
    candidate, number = path, 1
    while os.path.lexists(candidate):
        number += 1
        candidate = f"{path}-{number}"
    return candidate


def _move_state(paths: ProjectPaths, old_key: str) -> None:
    """A project muted under its old name stays muted (`gate mute`)."""
    folder = join(paths.dirs.state, "mute")
    source, target = join(folder, f"{old_key}.json"), join(folder, f"{paths.key}.json")
    if os.path.isfile(source) and not os.path.lexists(target):
        with contextlib.suppress(OSError):
            os.rename(source, target)


def unmerged(paths: ProjectPaths) -> list[str]:
    """Old stores whose files could not join this project (they differed from the project's copy)."""
    projects = join(paths.dirs.data, "projects")
    try:
        names = os.listdir(projects)
    except OSError:
        return []
    old_names = {project_key(path) for path in (paths.root, *paths.aliases)}
    return sorted(join(projects, n) for n in names if n.partition(UNMERGED_SUFFIX)[0] in old_names and
                  n != n.partition(UNMERGED_SUFFIX)[0])
