"""Listing a store directory cheaply (hot path): names and stat signatures, without reading any file.

Apart from files.py so that the hook can check freshness without importing the memory model.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # collections.abc costs a hook ~1 ms to import (collections with it); annotations are strings
if TYPE_CHECKING:
    from collections.abc import Iterator

SUFFIX = ".toml"
TEMP_PREFIX = ".tmp-"
# A valid memory (title and body within their limits) is far smaller; a bigger file — pulled into the team store
# by mistake or on purpose — is parsed by no reader (index, cue table), where every hook that met it would pay.
MAX_FILE_BYTES = 1_000_000
# A directory mtime younger than this is not trusted yet: a second write within the same timestamp tick
# would not move it. Fine-grained filesystems tick every few ms; one whose mtimes are whole seconds
# (some network and FAT-style filesystems) needs a window of its own granularity.
RACY_WINDOW_NS = 100_000_000
COARSE_RACY_WINDOW_NS = 2_000_000_000


def settled(mtime: int | None) -> bool:
    """Whether a directory's mtime is old enough to vouch for its listing."""
    if mtime is None:
        return True
    window = COARSE_RACY_WINDOW_NS if mtime % 1_000_000_000 == 0 else RACY_WINDOW_NS
    return time.time_ns() - mtime > window


class FileEntry:
    """What the index remembers of a file to know whether it changed, without reading it."""

    __slots__ = ("inode", "mtime_ns", "name", "size")

    def __init__(self, name: str, mtime_ns: int, size: int, inode: int) -> None:
        self.name = name
        self.mtime_ns = mtime_ns
        self.size = size
        self.inode = inode

    def signature(self) -> list[int]:
        return [self.mtime_ns, self.size, self.inode]


def scan_dir(store_dir: str | os.PathLike[str]) -> Iterator[FileEntry]:
    """The memory files of a directory with their stat signatures (temp files and others left out)."""
    try:
        entries = os.scandir(store_dir)
    except (FileNotFoundError, NotADirectoryError):
        return
    with entries:
        for entry in entries:
            name = entry.name
            if not name.endswith(SUFFIX) or name.startswith(TEMP_PREFIX) or name.startswith("."):
                continue
            try:
                stat = entry.stat()
            except OSError:
                continue
            # Regular files only: a symlink (say, pulled into the team store) could point anywhere.
            if entry.is_symlink() or not entry.is_file():
                continue
            yield FileEntry(name, stat.st_mtime_ns, stat.st_size, stat.st_ino)
