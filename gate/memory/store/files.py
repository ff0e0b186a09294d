"""The TOML store: one file per memory, `<id>.toml`, in one directory per scope.

Reading is stdlib (tomllib) so the hook can catch the index up; writing needs tomli_w and is cold path.
Writes are atomic: a temp file in the same directory, fsync, rename over the target, fsync the directory —
a crash leaves the old file or the new one, never half of either.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator
from pathlib import Path

from gate.errors import GateError, ValidationError
from gate.memory.model import Memory
from gate.memory.store import killpoints
from gate.memory.store.scan import MAX_FILE_BYTES, SUFFIX, TEMP_PREFIX, scan_dir
from gate.paths import ensure_private_dir


class CorruptMemoryFile(GateError):
    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(
            f"{path}: {reason}",
            hint=f"fix or delete the file by hand, or `gate show --history {Path(path).stem}` lists its saved versions "
            "and `gate restore ID@N` brings one back (the broken file is kept aside); `gate doctor` lists these",
        )
        self.path = Path(path)
        self.reason = reason


def memory_path(store_dir: str | os.PathLike[str], memory_id: str) -> Path:
    return Path(store_dir, f"{memory_id}{SUFFIX}")


def read_memory(path: str | os.PathLike[str]) -> Memory:
    """Parse one memory file; CorruptMemoryFile on anything that is not a valid memory."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:
                raise CorruptMemoryFile(path, f"larger than {MAX_FILE_BYTES} bytes: not a memory")
            data = tomllib.load(handle)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise CorruptMemoryFile(path, f"not valid TOML ({error})") from error
    try:
        memory = Memory.from_dict(data, fill_defaults=False)
    except GateError as error:
        raise CorruptMemoryFile(path, str(error)) from error
    if memory.id != path.stem:
        raise CorruptMemoryFile(path, f"its id {memory.id!r} does not match the file name")
    return memory


def to_toml(memory: Memory) -> str:
    import tomli_w  # cold path only: the hook never writes memories

    data = memory.to_dict()
    # Scalars first, then the body, then tables, so that a person reads the fact before the plumbing.
    ordered = {k: data[k] for k in ("id", "kind", "title", "status", "scope", "source", "project",
                                   "created", "updated", "session", "tags", "paths", "triggers")}
    if data.get("agent"):  # written only when known: a file without it reads as before
        ordered["agent"] = data["agent"]
    if data["cues"]:
        ordered["cues"] = data["cues"]
    if data.get("derived_cues"):
        ordered["derived_cues"] = data["derived_cues"]
    ordered["body"] = data["body"]
    if data["anchors"]:
        ordered["anchors"] = data["anchors"]
    if data.get("anchor_lines"):
        ordered["anchor_lines"] = data["anchor_lines"]
    if data["links"]:
        ordered["links"] = data["links"]
    return tomli_w.dumps(ordered, multiline_strings=True)


def _place(temp: Path, target: Path, *, new: bool) -> None:
    """Give a written temp file its name. A new memory never replaces a file: between the store's "exists
    already" check and this moment another process may have written the same id (`--id`, an import, a minted
    id), and os.replace would drop that memory without a word. A hard link fails instead."""
    if not new:
        os.replace(temp, target)
        return
    try:
        os.link(temp, target)
    except FileExistsError:
        raise ValidationError(f"a memory with id {target.stem!r} exists already (written a moment ago)") from None
    except OSError:
        os.replace(temp, target)  # a file system without hard links: as before
        return
    os.unlink(temp)


def write_memory(store_dir: str | os.PathLike[str], memory: Memory, *, private: bool, new: bool = False) -> Path:
    """Atomically write `memory` into `store_dir`; private stores are 0700 directories of 0600 files.

    `new`: the id must be free (ValidationError if another writer took it meanwhile)."""
    store_dir = Path(store_dir)
    if private:
        ensure_private_dir(store_dir)
    else:
        store_dir.mkdir(parents=True, exist_ok=True)
    target = memory_path(store_dir, memory.id)
    payload = to_toml(memory).encode("utf-8")
    temp = store_dir / f"{TEMP_PREFIX}{memory.id}-{os.getpid()}"
    mode = 0o600 if private else 0o644
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        killpoints.point("file.temp-written")
        _place(temp, target, new=new)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    killpoints.point("file.placed")
    fsync_dir(store_dir)
    return target


def write_memories(
    items: list[tuple[str | os.PathLike[str], Memory, bool]], *, new: bool = False, placed: list[Path] | None = None
) -> None:
    """Write many memories with one flush: all temp files, one os.sync(), then the renames.

    The same guarantee as write_memory (a crash leaves each file old or new, never partial) at the cost of
    one sync instead of an fsync per file, which makes a 10k-memory import seconds instead of minutes.
    `placed` grows by each file as it takes its name: an interrupted caller can say what it wrote."""
    staged: list[tuple[Path, Path]] = []
    try:
        for directory, memory, private in items:
            store_dir = Path(directory)
            if private:
                ensure_private_dir(store_dir)
            else:
                store_dir.mkdir(parents=True, exist_ok=True)
            temp = store_dir / f"{TEMP_PREFIX}{memory.id}-{os.getpid()}"
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
            staged.append((temp, memory_path(store_dir, memory.id)))
            with os.fdopen(fd, "wb") as handle:
                handle.write(to_toml(memory).encode("utf-8"))
        killpoints.point("files.staged")
        os.sync()
        for temp, target in staged:
            _place(temp, target, new=new)
            if placed is not None:
                placed.append(target)
            killpoints.point("files.placed")
    except BaseException:
        for temp, _ in staged:
            temp.unlink(missing_ok=True)
        raise
    for directory in {target.parent for _, target in staged}:
        fsync_dir(directory)


def sweep_temps(store_dir: str | os.PathLike[str]) -> None:
    """Remove the temp files of writers that are gone (a SIGKILL between writing a temp file and its rename):
    the memory they held was never placed, so it is not in the store either way."""
    try:
        entries = os.scandir(store_dir)
    except OSError:
        return
    with entries:
        for entry in entries:
            if not entry.name.startswith(TEMP_PREFIX):
                continue
            pid = entry.name.rsplit("-", 1)[-1]
            if pid.isdigit() and not _alive(int(pid)):
                try:  # noqa: SIM105 -- contextlib costs a hook ~2 ms to import, and the index reads this module
                    os.unlink(entry.path)
                except OSError:
                    pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def iter_memories(store_dir: str | os.PathLike[str]) -> Iterator[Memory | CorruptMemoryFile]:
    """Every memory of a directory, or the error of each file that is not one."""
    store_dir = Path(store_dir)
    for entry in sorted(scan_dir(store_dir), key=lambda e: e.name):
        try:
            yield read_memory(store_dir / entry.name)
        except CorruptMemoryFile as error:
            yield error
        except OSError as error:
            yield CorruptMemoryFile(store_dir / entry.name, f"unreadable ({error.strerror})")


def as_written(memory: Memory) -> Memory:
    """The memory as its file records it: a `superseded` status (written by earlier versions, or read back from
    a derived record) becomes active; the successor's link is what supersedes it. A team memory names no
    project: its file is committed, and the author's checkout path (home directory, user name) must not go into
    the repository; the team store lies in the project, so the file belongs to whichever checkout holds it (the
    cross-project filters apply to private memories, whose store is outside the project)."""
    changes: dict[str, str] = {}
    if memory.status == "superseded":
        changes["status"] = "active"
    if memory.scope == "team" and memory.project:
        changes["project"] = ""
    if not changes:
        return memory
    from dataclasses import replace

    return replace(memory, **changes)
