"""The first hour of a new user (issue 23): each defect a newcomer met, as a test that failed before its fix."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gate.memory.store import Store

# --- a memory file repaired in place is picked up by the next read --------------------------------------------


def _settle(directory: Path, ns: int) -> None:
    """Give the store directory an mtime old enough to vouch for its listing (instead of waiting for it)."""
    os.utime(directory, ns=(ns, ns))


def _write_in_place(path: Path, payload: bytes, how: str) -> None:
    """Replace a file's bytes without replacing the file (same inode), as `cp` and many editors do."""
    if how == "cp":
        source = path.with_name(".source-" + path.name)  # a dot file: no store reader lists it
        source.write_bytes(payload)
        subprocess.run(["cp", str(source), str(path)], check=True)
        source.unlink()
    else:
        with open(path, "r+b") as handle:
            handle.truncate(0)
            handle.write(payload)


@pytest.mark.parametrize("how", ["rewrite", "cp"])
def test_a_file_repaired_in_place_is_found_again(how: str, gate, project: Path) -> None:
    if how == "cp" and shutil.which("cp") is None:
        pytest.skip("no cp on this system")
    for title in ("The ledger export runs nightly", "Ledger balances are reconciled weekly"):
        assert gate("remember", title)[0] == 0
    code, out, _ = gate("remember", "Ledger entries are immutable once posted")
    memory_id = out.strip()
    path = Store.for_cwd(str(project)).locate(memory_id)
    assert path is not None
    store_dir = path.parent
    good = path.read_bytes()
    inode = path.stat().st_ino
    past = path.stat().st_mtime_ns - 60_000_000_000
    _settle(store_dir, past)
    assert memory_id in gate("search", "ledger", "immutable")[1]

    # Broken in place, the same size as the good file: a search notices (its signature moved) and warns.
    bad = good.replace(b"title = ", b"title ? ", 1)
    assert len(bad) == len(good) and bad != good
    _write_in_place(path, bad, how)
    broken_at = past + 30_000_000_000
    os.utime(path, ns=(broken_at, broken_at))
    _settle(store_dir, past)
    code, out, err = gate("search", "ledger", "immutable")
    assert memory_id not in out, out
    code, out, err = gate("search", "ledger", "immutable")  # the warning comes from what the last read saw
    assert memory_id not in out and "not valid TOML" in err, (out, err)

    # Repaired in place, and nothing a stat call sees moved: same inode, same size, same mtime, same directory.
    _write_in_place(path, good, how)
    os.utime(path, ns=(broken_at, broken_at))
    _settle(store_dir, past)
    info = path.stat()
    assert (info.st_ino, info.st_size, info.st_mtime_ns) == (inode, len(bad), broken_at)
    code, out, err = gate("search", "ledger", "immutable")
    assert code == 0
    assert memory_id in out, out
    assert "not valid TOML" not in err and "skipped" not in err
    code, out, err = gate("list")
    assert memory_id in out and "skipped" not in err
