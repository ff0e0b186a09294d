"""Staleness of anchored memories (hot path: standard library only).

A memory written with `--path` records a content hash of each anchored file at write time (`anchors`), and what
it is about there (`anchor_lines`): the memory's terms that stand on a few of the file's lines, and a hash of
those lines. When a file's content differs now and those lines changed (or none of them is left), or the file
is gone, what the memory says about it may no longer hold: the line that delivers it carries
`[stale: src/x.py changed since this was written on DATE]`. An edit elsewhere in the file leaves it fresh. A
memory that names nothing of the file (or was written before anchor_lines) is stale on any change. `gate verify`
runs the same check for every memory and can refresh the hashes or retire the memory.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

CHANGED = "changed"
MISSING = "missing"
UNREADABLE = "unreadable"
MAX_HASH_BYTES = 32 * 1024 * 1024  # a bigger anchored file is compared by size only: hashing it would stall a hook
# A bigger changed file is judged by its whole hash: reading it line by line for the memory's terms (~10 µs a line)
# would cost a delivering hook too much.
MAX_LINES_BYTES = 256 * 1024
SHOWN_FILES = 3


def content_hash(path: str | os.PathLike[str]) -> str:
    from gate.paths import sha256_builtin  # loaded already; hashlib's OpenSSL import costs the hook ~2 ms

    digest = sha256_builtin()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def _applies(record: dict[str, Any], root: str | os.PathLike[str]) -> bool:
    """Anchors are relative to the project they were written in; a user-scope memory read from another
    project cannot be checked there (its files are not this project's)."""
    from gate.paths import owns  # loaded already

    return record.get("scope") != "user" or owns(root, record.get("project") or "")


def check(record: dict[str, Any], root: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(relative path, CHANGED | MISSING | UNREADABLE) for each anchored file that no longer matches."""
    anchors = record.get("anchors") or {}
    if not isinstance(anchors, dict) or not anchors or not _applies(record, root):
        return []
    problems: list[tuple[str, str]] = []
    about = record.get("anchor_lines") or {}
    if not isinstance(about, dict):
        about = {}
    for relative, recorded in sorted(anchors.items()):
        if not isinstance(relative, str) or not isinstance(recorded, str):
            continue
        target = os.path.join(root, relative)
        try:
            size = os.stat(target).st_size
            if not os.path.isfile(target):
                problems.append((relative, MISSING))
            elif size > MAX_HASH_BYTES:
                continue
            elif content_hash(target) != recorded and not _same_lines(target, about.get(relative)):
                problems.append((relative, CHANGED))
        except FileNotFoundError:
            problems.append((relative, MISSING))
        except (OSError, ValueError):  # ValueError: a NUL byte in a hand-edited anchor
            problems.append((relative, UNREADABLE))
    return problems


def _read_lines(target: str | os.PathLike[str]) -> list[str] | None:
    """The file's lines, or None when it is too big to read line by line (or not there)."""
    try:
        if os.stat(target).st_size > MAX_LINES_BYTES:
            return None
        with open(target, "rb") as handle:
            return handle.read().decode("utf-8", "replace").splitlines()
    except (OSError, ValueError):
        return None


def _lines_about(lines: list[str], wanted: set[str] | frozenset[str]) -> tuple[dict[str, int], list[str]]:
    """How many lines hold each of `wanted`'s terms, and those lines (stripped: an indent is no change)."""
    from gate.textproc import terms  # only for a changed file with a record of what the memory is about

    counts: dict[str, int] = {}
    found: list[str] = []
    for line in lines:
        hit = wanted.intersection(terms(line))
        if hit:
            found.append(line.strip())
            for term in hit:
                counts[term] = counts.get(term, 0) + 1
    return counts, found


def _hash_lines(found: list[str]) -> str:
    from gate.paths import sha256_builtin

    digest = sha256_builtin()
    digest.update("\n".join(sorted(found)).encode("utf-8"))  # sorted: moving a line says nothing new
    return f"sha256:{digest.hexdigest()}"


def _same_lines(target: str | os.PathLike[str], about: Any) -> bool:
    """The file changed, but not where the memory is about: the lines holding its recorded terms are the same."""
    if not isinstance(about, dict):
        return False
    wanted, recorded = about.get("terms"), about.get("hash")
    if not wanted or not isinstance(wanted, list) or not isinstance(recorded, str):
        return False
    lines = _read_lines(target)
    if lines is None:
        return False
    _, found = _lines_about(lines, frozenset(str(t) for t in wanted))
    return bool(found) and _hash_lines(found) == recorded


def anchor_lines(
    root: str | os.PathLike[str], anchors: dict[str, str], text: str, rules: dict[str, Any] | None = None
) -> dict[str, dict[str, Any]]:
    """What a memory (its title and body: `text`) is about in each anchored file: its terms that stand on few of
    the file's lines (rules/remember.toml [anchors]), and a hash of those lines. A file that holds none of them,
    or too big to read line by line, gets no entry: any change to it makes the memory stale (write path)."""
    from gate.textproc import terms

    rules = rules or {}
    share = float(rules.get("max_line_share", 0.2))
    always = int(rules.get("always_lines", 3))
    most = int(rules.get("max_terms", 12))
    own = list(dict.fromkeys(terms(text)))
    out: dict[str, dict[str, Any]] = {}
    if not own:
        return out
    for relative in sorted(anchors):
        lines = _read_lines(os.path.join(root, relative))
        if not lines:
            continue
        counts, _ = _lines_about(lines, frozenset(own))
        # a term on most of the file's lines names the file, not what the memory says of it
        limit = max(always, int(share * sum(1 for line in lines if line.strip())))
        chosen = [t for t in own if 0 < counts.get(t, 0) <= limit][:most]
        if not chosen:
            continue
        _, found = _lines_about(lines, frozenset(chosen))
        out[relative] = {"terms": chosen, "hash": _hash_lines(found)}
    return out


def describe(problems: list[tuple[str, str]], date: str) -> str:
    """`stale: a.py changed since this was written on DATE; b.py is missing` (empty when nothing is wrong)."""
    if not problems:
        return ""
    parts: list[str] = []
    by_state: dict[str, list[str]] = {}
    for relative, state in problems:
        by_state.setdefault(state, []).append(relative)

    def names(paths: list[str]) -> str:
        shown = ", ".join(paths[:SHOWN_FILES])
        return shown + (f" and {len(paths) - SHOWN_FILES} more" if len(paths) > SHOWN_FILES else "")

    if CHANGED in by_state:
        parts.append(f"{names(by_state[CHANGED])} changed since this was written on {date}")
    if MISSING in by_state:
        verb = "are" if len(by_state[MISSING]) > 1 else "is"
        parts.append(f"{names(by_state[MISSING])} {verb} missing (anchored on {date})")
    if UNREADABLE in by_state:
        parts.append(f"{names(by_state[UNREADABLE])} could not be read")
    return "stale: " + "; ".join(parts)


def stale_mark(record: dict[str, Any], root: str | os.PathLike[str]) -> str:
    """The warning for a delivered line, or '' when every anchored file still matches."""
    try:
        return describe(check(record, root), str(record.get("created", ""))[:10] or "an unknown date")
    except Exception:  # a broken anchor must never cost the delivery itself
        return ""


def anchor_hashes(
    root: str | os.PathLike[str], globs: list[str], max_files: int = 50, max_visits: int = 20_000
) -> dict[str, str]:
    """Content hash of each file the globs match now, with the same glob meaning as path triggers
    (gate/memory/cues/globs.py: `src/db/**` and a plain `src/db` both mean every file beneath src/db).

    Used at write time and by `gate verify --refresh`; bounded so a `**/*.py` over a huge tree stays quick."""
    import re

    from gate.memory.cues.globs import glob_regex, normalize_glob, static_dir  # (`globs` is the argument here)

    found: dict[str, str] = {}
    for raw in globs:
        try:
            glob = normalize_glob(raw)
        except ValueError:
            continue
        pattern = re.compile(glob_regex(glob))
        start = os.path.join(root, static_dir(glob)) if static_dir(glob) else os.fspath(root)
        candidates: list[str] = []
        try:  # a name too long for the file system (ENAMETOOLONG) or with a NUL byte names no file
            if os.path.isfile(start):
                candidates = [static_dir(glob)]
            else:
                visits = 0
                for directory, subdirs, files in os.walk(start):
                    subdirs[:] = sorted(d for d in subdirs if d != ".git")
                    base = os.path.relpath(directory, root).replace(os.sep, "/")
                    for name in sorted(files):
                        candidates.append(name if base == "." else f"{base}/{name}")
                    visits += len(files) + len(subdirs)
                    if visits > max_visits:
                        break
        except (OSError, ValueError):
            continue
        for relative in candidates:
            if len(found) >= max_files:
                return found
            if relative not in found and pattern.fullmatch(relative):
                try:
                    found[relative] = content_hash(os.path.join(root, relative))
                except OSError:
                    continue
    return found
