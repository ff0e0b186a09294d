"""Stores named the old way join their repository's project, on first use (standard library only: a hook may
be the first use).

Before a project was its repository, a project's private memories, their history and its mute state were kept
under `project_key(checkout path)`, and each memory's `project` field held that path: every worktree and every
moved checkout had a store of its own, which the others never saw. `ProjectPaths.for_cwd` calls `migrate`
whenever a store of that name exists for the checkout at hand or for a path the id file names as an alias
(a stat or two a call: a person may add `alias = /old/path` for a checkout moved before this version of gate),
and once more, with `scan`,
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

from gate.project_id import ID_FILE, id_file_text, main_checkout, parse_id_file, project_key

# gate.paths calls this module, so it takes plain values and imports nothing of gate.paths (no import circle)
join = os.path.join
UNMERGED_SUFFIX = ".unmerged"


def _private_dir(path: str) -> None:
    os.makedirs(path, mode=0o700, exist_ok=True)


def _replace(path: str, text: str, mode: int) -> None:
    """The file whole or not at all: a temp file beside it, renamed over it."""
    temp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temp, path)


def checkouts(common: str) -> list[str]:
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
    _private_dir(target)
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


def _add_aliases(common: str, key: str, aliases: tuple[str, ...], new: list[str]) -> tuple[str, ...]:
    """Record earlier checkout paths of the project in its id file (read again: another process may have
    added some); the aliases after."""
    id_path = join(common, ID_FILE)
    with open(id_path, encoding="utf-8") as handle:
        parsed = parse_id_file(handle.read())
    if parsed is None or parsed[0] != key:
        return aliases  # the file changed hands meanwhile: leave it to its writer
    known = list(parsed[1])
    added = [a for a in dict.fromkeys(new) if a and a not in known and a != key and "\n" not in a]
    if added:
        _replace(id_path, id_file_text(key, known + added), 0o644)
    return tuple(known + added)


def _lock(projects: str) -> int | None:
    """An exclusive lock over migrations of this user's stores (two hooks of one event run at once)."""
    try:
        import fcntl
    except ImportError:  # no fcntl (Windows): the moves are safe to race, only an alias might be written twice
        return None
    _private_dir(projects)
    fd = os.open(join(projects, ".migrate.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def migrate(data: str, state: str, root: str, key: str, common: str, aliases: tuple[str, ...], *,
            scan: bool = False) -> tuple[str, ...]:
    """Move the old-named stores of the checkout `root` (and, with `scan`, of every checkout of the repository
    whose common git dir is `common`) into the store of project `key` under the data dir `data`; the
    project's aliases after (their old paths among them)."""
    projects = join(data, "projects")
    roots = [root, *(a for a in aliases if os.path.isabs(a))]  # an alias a person added: its store joins too
    if scan:
        roots += checkouts(common) + _removed_claude_worktrees(projects, common)
    found = [(path, project_key(path)) for path in dict.fromkeys(roots)]
    found = [(path, old) for path, old in found if old != key and os.path.isdir(join(projects, old))]
    if not found:
        return aliases
    lock = _lock(projects)
    try:
        # aliases first: a memory moved before its old path is known would be another project's for a moment
        aliases = _add_aliases(common, key, aliases,
                               [a for path, old in found for a in (path, _marker_root(join(projects, old))) if a])
        target = join(projects, key)
        for _, old in found:
            source = join(projects, old)
            if not os.path.isdir(source):
                continue  # another process moved it while this one waited for the lock
            _merge(source, target)
            if os.path.isdir(source) and os.listdir(source) == ["project.json"]:
                os.unlink(join(source, "project.json"))  # the project has its own marker; this path is an alias
                os.rmdir(source)
            if os.path.isdir(source):
                os.rename(source, _free_name(source + UNMERGED_SUFFIX))
            _move_state(state, old, key)
        if os.path.isdir(target):  # the marker names a checkout that exists (stats find the team store there)
            _replace(join(target, "project.json"), json.dumps({"root": root, "id": key}), 0o600)
    finally:
        if lock is not None:
            os.close(lock)
    return aliases


def _free_name(path: str) -> str:
    candidate, number = path, 1
    while os.path.lexists(candidate):
        number += 1
        candidate = f"{path}-{number}"
    return candidate


def _move_state(state: str, old_key: str, key: str) -> None:
    """A project muted under its old name stays muted (`gate mute`); the turns its sessions deferred under the
    old name still reach the project's next session start (gate/session/carryover.py; when the project has a
    carry file already, the old one stays: its entries are at most `carry_days` old and expire unseen)."""
    for folder in (join(state, "mute"), join(state, "carry")):
        source, target = join(folder, f"{old_key}.json"), join(folder, f"{key}.json")
        if os.path.isfile(source) and not os.path.lexists(target):
            with contextlib.suppress(OSError):
                os.rename(source, target)


def unmerged(data: str, root: str, aliases: tuple[str, ...]) -> list[str]:
    """Old stores whose files could not join the project of checkout `root` (they differed from its copy)."""
    projects = join(data, "projects")
    try:
        names = os.listdir(projects)
    except OSError:
        return []
    old_names = {project_key(path) for path in (root, *aliases)}
    return sorted(join(projects, n) for n in names if n.partition(UNMERGED_SUFFIX)[0] in old_names and
                  n != n.partition(UNMERGED_SUFFIX)[0])
