"""The background build of a missing index over a large store: a hook starts it, detached, and does not wait.

A hook builds a missing index itself only for a small store (gate.memory.index.read.INLINE_BUILD_FILES); a larger build
(e.g. 100k memories after the cache was cleared) would outlast the hook's timeout on every prompt. The build holds
build.lock in the index directory while it works, so the hooks meanwhile start no second one.
"""

from __future__ import annotations

import os

from gate.paths import background_python, ensure_private_dir

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from gate.memory.index.schema import IndexHandle

MODULE = "gate.memory.index.read"  # its main() calls build() here: this module does not know the index class


def store_files(index: IndexHandle, limit: int) -> int:
    """The number of files in the index's store directories, counted up to just past `limit`."""
    count = 0
    for directory in index.store_dirs.values():
        try:
            with os.scandir(directory) as entries:
                for _ in entries:
                    count += 1
                    if count > limit:
                        return count
        except OSError:
            continue
    return count


def spawn(index: IndexHandle) -> None:
    """Start gate.memory.index.read's main(ROOT) detached, unless a build holds the build lock."""
    import fcntl
    import subprocess

    try:
        ensure_private_dir(index.dir)
        lock_fd = os.open(os.path.join(index.dir, "build.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(lock_fd)
        subprocess.Popen(  # detached and silent: Claude Code waits for the hook's stdout to close
            background_python(MODULE, index.paths.root),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )
    except OSError:
        return  # a build is under way (its lock is held), or none can start: the next call tries again


def build(index: IndexHandle) -> int:
    """The background build a hook starts for a large store (gate.memory.index.read's main): hold the build lock,
    catch up, exit."""
    import fcntl

    ensure_private_dir(index.dir)
    lock_fd = os.open(os.path.join(index.dir, "build.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another build is at work
    try:
        index.catch_up(wait_seconds=120.0)
    finally:
        os.close(lock_fd)
    return 0
